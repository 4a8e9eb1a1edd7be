package corefile

import (
	"strconv"
	"strings"

	"github.com/kubesky/kubesky/skydns/forward"
)

// cacheSpec is what a cache directive asks for: CoreDNS keeps successful
// and denial answers apart, skydns keeps both in one cache.
type cacheSpec struct {
	successCap, denialCap int
	successTTL, denialTTL int // seconds
}

// CoreDNS's cache defaults: 9984 entries each, at most an hour for an
// answer and half an hour for a denial.
var defaultCache = cacheSpec{successCap: 9984, denialCap: 9984, successTTL: 3600, denialTTL: 1800}

// maxCacheTTL bounds the TTLs a cache directive may give.
const maxCacheTTL = 7 * 24 * 3600

func (t *translator) cache(s server, u use) {
	if t.allOwn(s.zones) {
		t.ignoreUse(u, "skydns answers "+strings.Join(s.zones, " ")+" from memory, current with etcd: nothing to cache")
		return
	}
	c := defaultCache
	args := u.args
	if len(args) > 0 && isNumber(args[0]) {
		n, why := count(args[0], 1, maxCacheTTL)
		if why != "" {
			t.refuse(u.at(), why)
			return
		}
		c.successTTL, c.denialTTL, args = n, n, args[1:]
	}
	for _, z := range args {
		if zone, _ := normalZone(z); zone != "." {
			t.refuse(u.at(), "skydns caches every forwarded name, not only those under "+z)
			return
		}
	}
	for _, o := range u.options {
		t.cacheOption(&c, o)
	}
	t.use(u.at(), "forwarded answers are cached, successes and denials in one cache; --max-ttl also caps the zones' TTLs",
		sky(forward.FlagCacheSize, strconv.Itoa(c.successCap+c.denialCap)),
		sky("max-ttl", strconv.Itoa(c.successTTL)),
		sky(forward.FlagCacheMaxNegativeTTL, strconv.Itoa(c.denialTTL)+"s"))
}

// allOwn reports whether skydns answers every one of zones itself.
func (t *translator) allOwn(zones []string) bool {
	for _, z := range zones {
		if !t.isOwn(z) {
			return false
		}
	}
	return len(zones) > 0
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func (t *translator) cacheOption(c *cacheSpec, o option) {
	a := o.at("cache")
	switch o.name {
	case "success":
		t.cacheKind(a, o.args, &c.successCap, &c.successTTL)
	case "denial":
		t.cacheKind(a, o.args, &c.denialCap, &c.denialTTL)
	case "prefetch":
		t.prefetch(a, o.args)
	case "serve_stale":
		t.serveStale(a, o.args)
	case "disable":
		t.cacheDisable(a, o.args)
	case "servfail":
		if len(o.args) == 1 && (o.args[0] == "0" || o.args[0] == "0s") {
			t.ignore(a, "skydns never caches SERVFAIL")
			return
		}
		t.refuse(a, "skydns never caches SERVFAIL")
	case "keepttl":
		t.refuse(a, "skydns serves cached TTLs counted down")
	default:
		t.unknownOption("cache", o)
	}
}

// cacheKind reads success or denial CAPACITY [TTL [MINTTL]].
func (t *translator) cacheKind(a at, args []string, capacity, ttl *int) {
	if len(args) == 0 || len(args) > 3 {
		t.refuse(a, "takes CAPACITY [TTL [MINTTL]]")
		return
	}
	n, why := count(args[0], 1, 1<<24)
	if why == "" && len(args) > 1 {
		*ttl, why = count(args[1], 1, maxCacheTTL)
	}
	if why == "" && len(args) > 2 && args[2] != "0" {
		why = "skydns caches an answer for its own TTL, never longer: no MINTTL"
	}
	if why != "" {
		t.refuse(a, why)
		return
	}
	*capacity = n
	t.use(a, "entries and longest TTL of these answers, in the one cache")
}

// prefetch reads AMOUNT [DURATION] [PERCENTAGE%].
func (t *translator) prefetch(a at, args []string) {
	if len(args) == 0 || len(args) > 3 {
		t.refuse(a, "takes AMOUNT [DURATION] [PERCENTAGE%]")
		return
	}
	amount, why := count(args[0], 1, 1<<30)
	percent := 10
	for _, x := range args[1:] {
		if p, ok := strings.CutSuffix(x, "%"); ok && why == "" {
			percent, why = count(p, 10, 90)
		} else if why == "" {
			_, why = parseDuration(x)
		}
	}
	if why != "" {
		t.refuse(a, why)
		return
	}
	t.use(a, "an entry hit this often is refreshed before it expires (skydns counts hits over the entry's life, without CoreDNS's DURATION)",
		sky(forward.FlagCachePrefetch, strconv.Itoa(amount)), sky(forward.FlagCachePrefetchPct, strconv.Itoa(percent)))
}

// serveStale reads [DURATION] [REFRESH_MODE].
func (t *translator) serveStale(a at, args []string) {
	d, why := parseDuration("1h")
	if len(args) > 0 {
		d, why = parseDuration(args[0])
	}
	if len(args) > 2 || (len(args) == 2 && args[1] != "verified" && args[1] != "immediate") {
		why = "takes [DURATION] [verified|immediate]"
	}
	if why != "" {
		t.refuse(a, why)
		return
	}
	t.use(a, "an expired answer is served, with TTL 30, only when no upstream answers in time (CoreDNS's verified mode)",
		sky(forward.FlagServeStale, d.String()))
}

// cacheDisable reads disable success|denial ZONES...: skydns never caches
// its own zones, and caches every other name.
func (t *translator) cacheDisable(a at, args []string) {
	if len(args) < 2 || (args[0] != "success" && args[0] != "denial") {
		t.refuse(a, "takes success|denial ZONES...")
		return
	}
	for _, z := range args[1:] {
		if zone, _ := normalZone(z); !t.isOwn(zone) {
			t.refuse(a, "skydns caches every forwarded name, "+z+" too")
			return
		}
	}
	t.ignore(a, "skydns never caches the answers of its own zones")
}
