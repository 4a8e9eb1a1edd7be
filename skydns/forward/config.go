package forward

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/spf13/pflag"
)

// The flag names; errors from Validate start with one of them.
const (
	FlagUpstream            = "upstream"
	FlagAllowRecursion      = "allow-recursion"
	FlagCacheSize           = "cache-size"
	FlagCacheMaxNegativeTTL = "cache-max-negative-ttl"
	FlagForwardTimeout      = "forward-timeout"
	FlagForwardDeadline     = "forward-deadline"
	FlagStubDomain          = "stub-domain"
	FlagServeStale          = "serve-stale"
	FlagCachePrefetch       = "cache-prefetch"
	FlagCachePrefetchPct    = "cache-prefetch-percent"
	FlagMaxConcurrent       = "forward-max-concurrent"
	FlagHealthCheck         = "forward-health-check"
	FlagForwardTCP          = "forward-tcp"
	FlagForwardExcept       = "forward-except"
)

// DefaultAllowRecursion are the clients that get recursion unless
// --allow-recursion says otherwise: loopback and the private ranges pod
// networks use (RFC 1918, RFC 6598 shared space, IPv6 unique local).
var DefaultAllowRecursion = []string{
	"127.0.0.0/8", "::1/128",
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
	"fc00::/7",
}

// Config holds the forwarding settings. Its fields hold what the flags hold;
// New parses them, and Validate reports what New would reject.
type Config struct {
	// Upstreams are the servers for names outside the zones, each "ip" or
	// "ip:port" (port 53 when left out). Empty means the nameservers of
	// ResolvConf other than this server itself.
	Upstreams []string
	// ResolvConf is the file default upstreams are read from
	// (default /etc/resolv.conf).
	ResolvConf string
	// ListenAddrs are this server's own DNS addresses ("host:port", host may
	// be empty or unspecified). Nameservers of ResolvConf and stub servers
	// that are this server are skipped, so skydns never forwards to itself.
	ListenAddrs []string
	// AllowRecursion are the client prefixes ("10.0.0.0/8") or addresses
	// that may have names outside the zones resolved.
	AllowRecursion []string
	// CacheSize bounds the cache in entries; 0 turns the cache off.
	CacheSize int
	// CacheMaxNegativeTTL caps how long NXDOMAIN and NODATA answers are
	// cached; 0 turns negative caching off.
	CacheMaxNegativeTTL time.Duration
	// ForwardTimeout bounds one attempt at one upstream (UDP and the TCP
	// retry together).
	ForwardTimeout time.Duration
	// ForwardDeadline bounds a whole query across all its attempts.
	ForwardDeadline time.Duration
	// StubDomains are "domain=ip[:port][,ip[:port]...]" entries; names at or
	// below a domain go to its servers.
	StubDomains []string
	// ServeStale is how long past its expiry a cached answer may still be
	// served (with TTL 30) while no upstream answers; 0 turns it off.
	ServeStale time.Duration
	// CachePrefetch is how many hits a cache entry needs in its lifetime
	// to be refreshed before it expires; 0 turns prefetching off.
	CachePrefetch int
	// CachePrefetchPercent is the last part of an entry's TTL, in percent,
	// in which a hit starts the refresh.
	CachePrefetchPercent int
	// MaxConcurrent bounds the queries in flight to one upstream; a query
	// beyond it goes to the next upstream. 0 means no bound.
	MaxConcurrent int
	// HealthCheck is how often an upstream that failed is probed until it
	// answers again; 0 turns probing off (a failed upstream is then held
	// for ten seconds only).
	HealthCheck time.Duration
	// ForceTCP asks plain DNS upstreams over TCP only, as CoreDNS's
	// force_tcp; false: over UDP, and over TCP after a truncated reply.
	ForceTCP bool
	// Except are domains whose names are not sent to the default
	// upstreams: SERVFAIL, as CoreDNS's forward except (a stub domain's
	// names still go to it).
	Except []string
	// UpstreamTLSCA is a PEM file of the CAs that DNS over TLS upstreams'
	// certificates are verified against; empty: the system's roots.
	UpstreamTLSCA string
	// MaxTTL caps the TTLs of upstream answers, as served and as cached
	// (skydns's --max-ttl); 0 means an hour.
	MaxTTL time.Duration
}

// DefaultConfig returns the settings the flags default to.
func DefaultConfig() Config {
	return Config{
		ResolvConf:          "/etc/resolv.conf",
		AllowRecursion:      append([]string(nil), DefaultAllowRecursion...),
		CacheSize:           10000,
		CacheMaxNegativeTTL: 30 * time.Second,
		ForwardTimeout:      2 * time.Second,
		ForwardDeadline:     4 * time.Second,

		CachePrefetchPercent: 10,
		HealthCheck:          time.Second,
		MaxTTL:               defaultMaxTTL,
	}
}

// AddFlags registers the forwarding flags on fs, bound to c's fields; their
// defaults are c's current values.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.Upstreams, FlagUpstream, c.Upstreams,
		"upstream DNS servers (ip, ip:port, or tls://ip[:port]#server.name for DNS over TLS; repeatable or comma separated) for names outside the zones; default: the nameservers of "+c.ResolvConf+" other than this server")
	fs.StringSliceVar(&c.AllowRecursion, FlagAllowRecursion, c.AllowRecursion,
		"client CIDRs whose queries for names outside the zones are forwarded; others get REFUSED")
	fs.IntVar(&c.CacheSize, FlagCacheSize, c.CacheSize,
		"forwarded answers kept in the cache (entries); 0 disables the cache")
	fs.DurationVar(&c.CacheMaxNegativeTTL, FlagCacheMaxNegativeTTL, c.CacheMaxNegativeTTL,
		"longest time an NXDOMAIN or NODATA answer from upstream is cached; 0 disables negative caching")
	fs.DurationVar(&c.ForwardTimeout, FlagForwardTimeout, c.ForwardTimeout,
		"time one upstream has to answer before the next one is tried")
	fs.DurationVar(&c.ForwardDeadline, FlagForwardDeadline, c.ForwardDeadline,
		"time a forwarded query may take across all upstreams before the client gets SERVFAIL")
	fs.StringArrayVar(&c.StubDomains, FlagStubDomain, c.StubDomains,
		"domain=ip[:port][,ip[:port]...]: send names under domain to these servers (repeatable)")
	fs.DurationVar(&c.ServeStale, FlagServeStale, c.ServeStale,
		"how long past expiry a cached answer is still served, with TTL 30, while no upstream answers (RFC 8767); 0 disables")
	fs.IntVar(&c.CachePrefetch, FlagCachePrefetch, c.CachePrefetch,
		"hits a cache entry needs in its lifetime to be refreshed in the background before it expires; 0 disables")
	fs.IntVar(&c.CachePrefetchPercent, FlagCachePrefetchPct, c.CachePrefetchPercent,
		"a hit in the last this percent of an entry's TTL starts its prefetch (1-99)")
	fs.IntVar(&c.MaxConcurrent, FlagMaxConcurrent, c.MaxConcurrent,
		"queries in flight to one upstream at most; more go to the next upstream, or get SERVFAIL; 0 means no limit")
	fs.DurationVar(&c.HealthCheck, FlagHealthCheck, c.HealthCheck,
		"how often an upstream that failed is probed until it answers again; 0 disables probing")
	fs.StringSliceVar(&c.Except, FlagForwardExcept, c.Except,
		"domains whose names are not forwarded to --upstream but get SERVFAIL, comma separated (stub domains still forward)")
	fs.BoolVar(&c.ForceTCP, FlagForwardTCP, c.ForceTCP,
		"ask plain DNS upstreams over TCP only (false: over UDP, then over TCP after a truncated reply)")
	fs.StringVar(&c.UpstreamTLSCA, FlagUpstreamTLSCA, c.UpstreamTLSCA,
		"PEM file of the CAs that tls:// upstreams' certificates are verified against (default: the system's roots)")
}

// Validate reports every setting New would reject; each error names its flag.
func (c Config) Validate() error {
	_, err := c.parse()
	return err
}

// parsed is a Config checked and converted.
type parsed struct {
	upstreams []netip.AddrPort // nil: read ResolvConf
	listen    []netip.AddrPort
	acl       []netip.Prefix
	stubs     map[string][]netip.AddrPort
	except    []string                  // lower-case FQDNs
	tls       map[netip.AddrPort]string // the DNS over TLS upstreams' server names
	roots     *x509.CertPool            // nil: the system's roots
}

func (c Config) parse() (parsed, error) {
	var p parsed
	var errs []error
	p.upstreams, errs = parseEach("--"+FlagUpstream, c.Upstreams, p.parseUpstream, errs)
	var err error
	if p.roots, err = loadRoots(c.UpstreamTLSCA); err != nil {
		errs = append(errs, err)
	}
	p.listen, errs = parseEach("listen address", c.ListenAddrs, parseListen, errs)
	p.acl, errs = parseEach("--"+FlagAllowRecursion, c.AllowRecursion, ParsePrefix, errs)
	var stubs []stubFlag
	stubs, errs = parseEach("--"+FlagStubDomain, c.StubDomains, parseStubFlag, errs)
	p.except, errs = parseEach("--"+FlagForwardExcept, c.Except, stubDomain, errs)
	p.stubs = map[string][]netip.AddrPort{}
	for _, s := range stubs {
		p.stubs[s.domain] = append(p.stubs[s.domain], s.servers...)
	}
	if err := c.checkNumbers(); err != nil {
		errs = append(errs, err)
	}
	return p, errors.Join(errs...)
}

func (c Config) checkNumbers() error {
	switch {
	case c.CacheSize < 0:
		return fmt.Errorf("--%s %d: must be 0 (off) or more", FlagCacheSize, c.CacheSize)
	case c.CacheMaxNegativeTTL < 0:
		return fmt.Errorf("--%s %s: must be 0 (off) or more", FlagCacheMaxNegativeTTL, c.CacheMaxNegativeTTL)
	case c.ForwardTimeout <= 0:
		return fmt.Errorf("--%s %s: must be more than 0", FlagForwardTimeout, c.ForwardTimeout)
	case c.ForwardDeadline < c.ForwardTimeout:
		return fmt.Errorf("--%s %s: must be at least --%s (%s)", FlagForwardDeadline, c.ForwardDeadline, FlagForwardTimeout, c.ForwardTimeout)
	}
	return c.checkCacheNumbers()
}

func (c Config) checkCacheNumbers() error {
	switch {
	case c.ServeStale < 0:
		return fmt.Errorf("--%s %s: must be 0 (off) or more", FlagServeStale, c.ServeStale)
	case c.CachePrefetch < 0:
		return fmt.Errorf("--%s %d: must be 0 (off) or more", FlagCachePrefetch, c.CachePrefetch)
	case c.CachePrefetchPercent < 1 || c.CachePrefetchPercent > 99:
		return fmt.Errorf("--%s %d: must be between 1 and 99", FlagCachePrefetchPct, c.CachePrefetchPercent)
	case c.MaxConcurrent < 0:
		return fmt.Errorf("--%s %d: must be 0 (no limit) or more", FlagMaxConcurrent, c.MaxConcurrent)
	case c.HealthCheck < 0:
		return fmt.Errorf("--%s %s: must be 0 (off) or more", FlagHealthCheck, c.HealthCheck)
	case c.MaxTTL < 0:
		return fmt.Errorf("--max-ttl %s: must be more than 0", c.MaxTTL)
	}
	return nil
}

// parseEach parses every value, appending an error naming what and the
// value for each one that does not parse.
func parseEach[T any](what string, values []string, parse func(string) (T, error), errs []error) ([]T, []error) {
	var out []T
	for _, v := range values {
		x, err := parse(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", what, v, err))
			continue
		}
		out = append(out, x)
	}
	return out, errs
}
