package forward

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/tap"
)

// Forwarder answers queries for names outside the served zones. It is safe
// for concurrent use.
type Forwarder struct {
	logger   *slog.Logger
	now      func() time.Time
	timeout  time.Duration // per attempt
	deadline time.Duration // per query
	udp, tcp *dns.Client
	metrics  *metrics
	health   *health
	flight   singleflight.Group
	listen   []netip.AddrPort // this server, never forwarded to
	local    []netip.Addr     // this host's interface addresses
	limit    *limiter
	dot      dotUpstreams // the DNS over TLS upstreams' connections (dot.go)
	tap      *tap.Tap     // nil: no dnstap (tap.go)
	peers    peers        // cookies and 0x20 support of each upstream
	loops    *loops       // the forwarding loop probes and verdicts (loop.go)

	generation atomic.Uint64 // see Generation (cached.go)

	loopStart sync.Once     // starts the loop checks (CheckLoops)
	loopKick  chan struct{} // asks the loop checks to look at once

	healthCheck  time.Duration // probe interval of failed upstreams; 0: none
	forceTCP     bool          // plain DNS upstreams asked over TCP only
	prefetchHits int64         // hits that earn an entry a prefetch; 0: none
	prefetchPct  int           // the last part of a TTL, in percent, to prefetch in
	ctx          context.Context
	cancel       context.CancelFunc
	background   sync.WaitGroup // probes and prefetches

	// settings are the upstreams, the ACL and the cache in use; a change
	// in etcd replaces them (live.go). base is what the flags said.
	settings     atomic.Pointer[settings]
	liveMu       sync.Mutex         // serialises SetLiveFrom and SetBase
	base         Config             // guarded by liveMu
	liveSnap     *snapshot.Snapshot // guarded by liveMu; the last SetLiveFrom's
	liveZone     string             // guarded by liveMu; the last SetLiveFrom's
	liveProblems map[string]bool    // guarded by liveMu; reported by the last SetLiveFrom

	stubs        atomic.Pointer[stubTable]
	stubMu       sync.Mutex                  // serialises SetStubs and SetBase
	staticStubs  map[string][]netip.AddrPort // guarded by stubMu: from --stub-domain
	etcdStubs    map[string][]string         // guarded by stubMu: the last SetStubs's
	etcdProblems []string                    // guarded by stubMu: found with etcdStubs
	stubProblems map[string]bool             // guarded by stubMu; reported by the last SetStubs
}

// New checks cfg and builds a Forwarder whose metrics are registered on reg
// (nil: not registered). With no upstreams configured it reads
// cfg.ResolvConf; finding no upstream at all is an error.
func New(cfg Config, reg prometheus.Registerer, logger *slog.Logger) (*Forwarder, error) {
	return newForwarder(cfg, reg, logger, time.Now)
}

func newForwarder(cfg Config, reg prometheus.Registerer, logger *slog.Logger, now func() time.Time) (*Forwarder, error) {
	p, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Forwarder{
		logger:   logger,
		now:      now,
		base:     cfg,
		timeout:  cfg.ForwardTimeout,
		deadline: cfg.ForwardDeadline,
		udp:      &dns.Client{Net: "udp", UDPSize: udpSize, Timeout: cfg.ForwardTimeout},
		tcp:      &dns.Client{Net: "tcp", Timeout: cfg.ForwardTimeout},
		metrics:  newMetrics(),
		health:   newHealth(now),
		listen:   p.listen,
		local:    localAddrs(),
		limit:    newLimiter(cfg.MaxConcurrent),
		loops:    newLoops(),
		loopKick: make(chan struct{}, 1),

		healthCheck:  cfg.HealthCheck,
		forceTCP:     cfg.ForceTCP,
		prefetchHits: int64(cfg.CachePrefetch),
		prefetchPct:  cfg.CachePrefetchPercent,
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	s, err := f.newSettings(cfg, p, nil)
	if err != nil {
		return nil, err
	}
	f.settings.Store(s)
	f.logger.Info("forwarding names outside the zones", "upstreams", s.upstream.addrs)
	f.setStaticStubs(p.stubs)
	if reg != nil {
		if err := f.metrics.register(reg, func() int { return f.settings.Load().cache.len() }); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Close stops the health probes and waits for them and for the prefetches
// under way to end (a prefetch ends within --forward-deadline).
func (f *Forwarder) Close() {
	f.cancel()
	f.background.Wait()
	f.dot.close()
}

// upstreams returns the configured upstreams or else resolv.conf's.
func (f *Forwarder) upstreams(resolvConf string, configured []netip.AddrPort) ([]netip.AddrPort, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	if resolvConf == "" {
		resolvConf = DefaultConfig().ResolvConf
	}
	servers, err := defaultUpstreams(resolvConf, f.listen)
	if err != nil {
		return nil, fmt.Errorf("no --%s given: %w", FlagUpstream, err)
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("no --%s given and %s names no nameserver other than this server", FlagUpstream, resolvConf)
	}
	return servers, nil
}

// setStaticStubs installs the --stub-domain table, without servers that
// are this server.
func (f *Forwarder) setStaticStubs(stubs map[string][]netip.AddrPort) {
	f.staticStubs = f.withoutSelfStubs(stubs)
	table := newStubTable(f.staticStubs)
	f.stubs.Store(&table)
	if len(table) > 0 {
		f.logger.Info("stub domains", "stubs", table.String())
	}
}

// withoutSelfStubs returns stubs without the servers that are this
// server, and without the domains left with none.
func (f *Forwarder) withoutSelfStubs(stubs map[string][]netip.AddrPort) map[string][]netip.AddrPort {
	out := map[string][]netip.AddrPort{}
	for domain, servers := range stubs {
		if kept := withoutSelf(servers, f.listen, f.local); len(kept) > 0 {
			out[domain] = kept
		} else {
			f.logger.Warn("ignoring stub domain whose servers are all this server", "domain", domain)
		}
	}
	return out
}

// RecursionAllowed reports whether client may have names outside the zones
// resolved; the server can use it to decide whether to resolve the
// external target of a CNAME chain (ResolveExternal).
func (f *Forwarder) RecursionAllowed(client netip.Addr) bool {
	return f.settings.Load().acl.allows(client)
}

// ServeForward answers req, a query for a name outside the zones, from
// client. It never returns nil: refused clients and queries get REFUSED
// (see admit), and a query no upstream answered in time gets SERVFAIL. The
// reply is not truncated to the client's UDP size; the caller does that.
func (f *Forwarder) ServeForward(ctx context.Context, req *dns.Msg, client netip.Addr) *dns.Msg {
	if len(req.Question) == 1 && f.loops.cameBack(strings.ToLower(dns.Fqdn(req.Question[0].Name))) {
		return reply(req, nil, dns.RcodeServerFailure) // our loop probe, back: not sent round again
	}
	if rcode, reason := f.admit(req, client); rcode != dns.RcodeSuccess {
		return f.refuse(req, rcode, reason)
	}
	q := questionOf(req)
	m, err := f.resolve(ctx, q)
	if err != nil {
		f.metrics.servfail.Inc()
		f.logger.Debug("forwarding failed", "name", q.name, "type", dns.TypeToString[q.qtype], "err", err)
		return reply(req, nil, dns.RcodeServerFailure)
	}
	return reply(req, m, m.Rcode)
}

// admit decides whether req may be forwarded. It returns RcodeSuccess, or
// the rcode to answer with and the reason for the refused metric.
func (f *Forwarder) admit(req *dns.Msg, client netip.Addr) (int, string) {
	switch {
	case len(req.Question) != 1:
		return dns.RcodeFormatError, ""
	case req.Opcode != dns.OpcodeQuery:
		return dns.RcodeNotImplemented, ""
	case !f.settings.Load().acl.allows(client):
		return dns.RcodeRefused, "acl"
	}
	return admitQuestion(req)
}

// admitQuestion is admit's part that does not depend on the client, for
// a query with one question and opcode QUERY.
func admitQuestion(req *dns.Msg) (int, string) {
	switch {
	case !req.RecursionDesired:
		return dns.RcodeRefused, "no_recursion_desired"
	case req.Question[0].Qclass != dns.ClassINET:
		return dns.RcodeRefused, "class"
	case req.Question[0].Qtype == dns.TypeAXFR || req.Question[0].Qtype == dns.TypeIXFR:
		return dns.RcodeRefused, "transfer"
	}
	return dns.RcodeSuccess, ""
}

func (f *Forwarder) refuse(req *dns.Msg, rcode int, reason string) *dns.Msg {
	m := reply(req, nil, rcode)
	if reason != "" {
		f.metrics.refused.WithLabelValues(reason).Inc()
	}
	if reason == "acl" {
		m.RecursionAvailable = false
	}
	return m
}

// reply builds the answer to req with from's sections (from may be nil).
func reply(req, from *dns.Msg, rcode int) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(req, rcode)
	m.RecursionAvailable = true
	do := false
	if opt := req.IsEdns0(); opt != nil {
		do = opt.Do()
	}
	if from != nil {
		m.Answer, m.Ns, m.Extra = from.Answer, from.Ns, from.Extra
		m.AuthenticatedData = from.AuthenticatedData && (do || req.AuthenticatedData)
	}
	if req.IsEdns0() != nil {
		m.SetEdns0(udpSize, do)
	}
	return m
}

// errNoAnswer means every upstream failed or the deadline passed.
var errNoAnswer = errors.New("no upstream answered")
