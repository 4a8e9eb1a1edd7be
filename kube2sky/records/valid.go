package records

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// MaxNameLength is the longest domain name, in presentation form without
// the trailing dot, that fits the 255 bytes of a name on the wire.
const MaxNameLength = 253

// CheckEntry returns why e is not a record kube2sky may write, or nil. Its
// key must be under the zone or the reverse prefix and stand for a name of
// at most MaxNameLength characters whose labels are 1 to 63 lower-case
// letters, digits, hyphens or underscores (so that contract.Name and
// contract.Key map it back and forth unchanged); its host, when set, must
// be an address fit for an A or AAAA record or such a name, fully
// qualified; a record without a host must carry a text.
func (z Zone) CheckEntry(e Entry) error {
	if err := z.checkKey(e.Key); err != nil {
		return err
	}
	return checkHost(e.Record)
}

// CheckKeyValue is CheckEntry for a key and a value as read from etcd: the
// value must also decode (contract.Decode).
func (z Zone) CheckKeyValue(key string, value []byte) error {
	r, err := contract.Decode(key, value)
	if err != nil {
		return err
	}
	if err := z.CheckEntry(Entry{Key: key, Record: r}); err != nil {
		return fmt.Errorf("key %q: %w", key, err)
	}
	return nil
}

func (z Zone) checkKey(key string) error {
	rest, ok := strings.CutPrefix(key, z.prefix+"/")
	if !ok || !(strings.HasPrefix(key, z.ZoneKeyPrefix()) || z.IsReverseKey(key)) {
		return fmt.Errorf("outside %s and %s", z.ZoneKeyPrefix(), z.arpaKey)
	}
	return checkLabels(rest, '/')
}

// checkHost checks a record's host: an address fit for an A or AAAA record,
// or a fully qualified name of valid labels.
func checkHost(r contract.Record) error {
	switch {
	case r.Host == "" && r.Text != "":
		return nil
	case r.Host == "":
		return contract.ErrNoData
	}
	if name, ok := strings.CutSuffix(r.Host, "."); ok { // no address ends with a dot
		if err := checkLabels(name, '.'); err != nil {
			return fmt.Errorf("host %q: %w", r.Host, err)
		}
		return nil
	}
	addr, err := netip.ParseAddr(r.Host)
	if err != nil {
		return fmt.Errorf("host %q is neither an IP address nor a fully qualified name", r.Host)
	}
	if reason := unusableAddr(addr); reason != "" {
		return fmt.Errorf("host %q: %s", r.Host, reason)
	}
	return nil
}

var errEmptyLabel = errors.New("empty label")

// checkLabels checks a name written with sep between its labels (a key
// below the prefix, or a name without its trailing dot): at most
// MaxNameLength characters in all, each label 1 to 63 lower-case letters,
// digits, hyphens or underscores. It allocates nothing on success.
func checkLabels(name string, sep byte) error {
	if len(name) > MaxNameLength {
		return fmt.Errorf("name of %d characters, longer than %d", len(name), MaxNameLength)
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != sep {
			if !keyLabelByte(name[i]) {
				return fmt.Errorf("character %q not allowed in a label", name[i])
			}
			continue
		}
		switch n := i - start; {
		case n == 0:
			return errEmptyLabel
		case n > 63:
			return fmt.Errorf("label of %d characters, longer than 63", n)
		}
		start = i + 1
	}
	return nil
}

func keyLabelByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
}

// unusableAddr returns why an address must not be the answer of an A or
// AAAA record of a Service or an endpoint, or "": no client can reach a
// Service at an unspecified, loopback, link-local, multicast or broadcast
// address, and an IPv4-mapped IPv6 address is an IPv4 address in disguise.
func unusableAddr(addr netip.Addr) string {
	switch {
	case addr.Zone() != "":
		return "an address with a zone"
	case addr.Is4In6():
		return "an IPv4-mapped IPv6 address"
	case addr.IsUnspecified():
		return "the unspecified address"
	case addr.IsLoopback():
		return "a loopback address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case addr.IsMulticast():
		return "a multicast address"
	case addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	return ""
}
