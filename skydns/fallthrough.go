package skydns

import (
	"fmt"
	"slices"

	"github.com/kubesky/kubesky/skydns/resolver"
)

// fallthroughRule says which names the zones deny (NXDOMAIN) go to the
// forwarder instead, for clients that may recurse: reverse names with
// --reverse-fallthrough, and the names of the zones --zone-fallthrough
// lists, as CoreDNS's kubernetes plugin does with fallthrough.
type fallthroughRule struct {
	reverse bool
	zones   []string // fully qualified, lower case, each one of --zone
}

// passesOn reports whether a name of zone that no record answers goes to
// the forwarder.
func (f fallthroughRule) passesOn(zone resolver.ZoneMatch) bool {
	if zone.Reverse() {
		return f.reverse
	}
	return slices.Contains(f.zones, zone.Name())
}

// normalizeZoneFallthrough puts --zone-fallthrough's zones in --zone's
// form and accepts only zones skydns answers (c.Zones, normalized first).
func (c *Config) normalizeZoneFallthrough() error {
	out := make([]string, 0, len(c.ZoneFallthrough))
	for _, z := range c.ZoneFallthrough {
		fqdn := normalZone(z)
		if !slices.Contains(c.Zones, fqdn) {
			return fmt.Errorf("--zone-fallthrough: %q is not one of the zones answered (--zone %v)", z, c.Zones)
		}
		out = append(out, fqdn)
	}
	c.ZoneFallthrough = out
	return nil
}
