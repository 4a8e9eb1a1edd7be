package corefile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubesky/kubesky/skydns/forward"
)

// resolvConf is the file skydns reads its default upstreams from.
const resolvConf = "/etc/resolv.conf"

func (t *translator) forward(s server, u use) {
	if len(u.args) < 2 {
		t.refuse(u.at(), "forward takes FROM TO...")
		return
	}
	domains := s.zones
	if from := u.args[0]; from != "." {
		zone, why := normalZone(from)
		if why != "" {
			t.refuse(u.at(), from+": "+why)
			return
		}
		domains = []string{zone}
	}
	if len(domains) == 0 {
		t.ignoreUse(u, "its server block is refused")
		return
	}
	servername := tlsServerName(u.options)
	own := false
	for _, d := range domains {
		switch {
		case d == ".":
			t.upstreams(u, servername)
		case t.isOwn(d):
			own = true
			t.ownForward(u, d)
		default:
			t.stubDomain(u, d)
		}
	}
	if own {
		t.ignoreOptions(u, "skydns answers these zones itself: nothing is forwarded")
		return
	}
	root := slices.Contains(domains, ".")
	for _, o := range u.options {
		t.forwardOption(o, root)
	}
}

// ignoreOptions ignores every line of a directive's block for one reason.
func (t *translator) ignoreOptions(u use, why string) {
	for _, o := range u.options {
		t.ignore(o.at(u.name), why)
	}
}

// upstreams translates forward . TO... for the root zone.
func (t *translator) upstreams(u use, servername string) {
	to := u.args[1:]
	if len(to) == 1 && to[0] == resolvConf {
		t.use(u.at(), "names outside the zones go to the nameservers of "+resolvConf+", skydns's default (skydns's own addresses left out)")
		return
	}
	var addrs []string
	for _, x := range to {
		addr, why := upstreamAddr(x, servername)
		if why != "" {
			t.refuse(u.at(), x+": "+why)
			return
		}
		addrs = append(addrs, addr)
	}
	t.use(u.at(), "names outside the zones go to these upstreams", sky(forward.FlagUpstream, strings.Join(addrs, ",")))
}

// upstreamAddr turns a forward TO into skydns's --upstream form: ip[:port],
// or tls://ip[:port]#server-name.
func upstreamAddr(to, servername string) (string, string) {
	switch {
	case strings.HasPrefix(to, "/"):
		return "", "skydns reads upstreams from " + resolvConf + " alone, not mixed with other upstreams or from another file"
	case strings.HasPrefix(to, "tls://"):
		return checkUpstream(tlsUpstream(strings.TrimPrefix(to, "tls://"), servername))
	case strings.Contains(to, "://") && !strings.HasPrefix(to, "dns://"):
		return "", "skydns forwards over plain DNS and DNS over TLS only"
	}
	return checkUpstream(strings.TrimPrefix(to, "dns://"))
}

// tlsUpstream writes a DNS over TLS upstream (ip[%name][:port]) as
// skydns's tls://ip[:port]#name.
func tlsUpstream(hostport, servername string) string {
	if ip, rest, ok := strings.Cut(hostport, "%"); ok {
		name, port, _ := strings.Cut(rest, ":")
		hostport, servername = ip, name
		if port != "" {
			hostport += ":" + port
		}
	}
	if servername == "" {
		return "tls://" + hostport
	}
	return "tls://" + hostport + "#" + servername
}

// checkUpstream checks an --upstream value with skydns's own parser.
func checkUpstream(addr string) (string, string) {
	cfg := forward.DefaultConfig()
	cfg.Upstreams = []string{addr}
	if err := cfg.Validate(); err != nil {
		return "", "not an upstream skydns takes: " + err.Error()
	}
	return addr, ""
}

// tlsServerName is the forward block's tls_servername, if any.
func tlsServerName(options []option) string {
	for _, o := range options {
		if o.name == "tls_servername" && len(o.args) == 1 {
			return o.args[0]
		}
	}
	return ""
}

// stubDomain translates a forward for a zone outside skydns's own.
func (t *translator) stubDomain(u use, domain string) {
	value := strings.TrimSuffix(domain, ".") + "=" + strings.Join(u.args[1:], ",")
	cfg := forward.DefaultConfig()
	cfg.StubDomains = []string{value}
	if err := cfg.Validate(); err != nil {
		t.refuse(u.at(), "a stub domain's servers must be plain DNS IP addresses: "+err.Error())
		return
	}
	t.use(u.at(), "names under "+domain+" go to these servers, a stub domain", sky(forward.FlagStubDomain, value))
}

// ownForward is a forward of a zone skydns answers itself, as NodeLocal
// DNSCache forwards the cluster domain to the cluster's DNS Service.
func (t *translator) ownForward(u use, zone string) {
	if isReverse(zone) {
		t.use(u.at(), "skydns answers "+zone+" from kube2sky's PTR records and forwards the PTR questions no record answers",
			sky("reverse-fallthrough", "true"))
		return
	}
	t.use(u.at(), "skydns answers "+zone+" itself from etcd, as on every node in kubesky's node-local topology",
		sky("zone", t.cluster))
}

// forwardIgnored are forward options that change nothing kubesky answers.
var forwardIgnored = map[string]string{
	"expire":         "skydns opens a socket per UDP query and keeps no idle connections",
	"max_idle_conns": "skydns opens a socket per UDP query and keeps no idle connections",
}

// forwardRefused are forward options kubesky lacks, with why.
var forwardRefused = map[string]string{
	"max_fails":                        "skydns marks an upstream down at its first failure",
	"next":                             "skydns returns the upstream's answer, whatever its rcode",
	"next_on_nodata":                   "skydns returns the upstream's answer, whatever its rcode",
	"failfast_all_unhealthy_upstreams": "skydns still tries upstreams that are all down, the one that failed least recently first",
	"resolver":                         "skydns takes upstreams as IP addresses, never names",
	"doh_method":                       "skydns forwards over plain DNS and DNS over TLS only",
	"max_connect_attempts":             "skydns bounds a query by --forward-deadline, not by attempts",
}

func (t *translator) forwardOption(o option, root bool) {
	a := o.at("forward")
	if t.listed(a, o.name, forwardIgnored, forwardRefused) {
		return
	}
	switch o.name {
	case "max_concurrent":
		t.maxConcurrent(a, o.args)
	case "policy":
		t.policy(a, o.args)
	case "health_check":
		t.healthCheck(a, o.args)
	case "force_tcp":
		t.forceTCP(a, root)
	case "except":
		t.except(a, o.args, root)
	case "prefer_udp":
		t.use(a, "skydns always asks over UDP first, then over TCP after a truncated answer")
	case "tls_servername":
		t.use(a, "DNS over TLS upstreams must present a certificate for this name")
	case "tls":
		t.forwardTLS(a, o.args)
	case "failover":
		t.failover(a, o.args)
	default:
		t.unknownOption("forward", o)
	}
}

// forceTCP is force_tcp: skydns's --forward-tcp is one setting for every
// upstream, so it is taken from the root's forward only.
func (t *translator) forceTCP(a at, root bool) {
	if !root {
		t.refuse(a, "skydns asks every plain upstream alike: force_tcp in the forward of . only")
		return
	}
	t.use(a, "plain DNS upstreams are asked over TCP only", sky(forward.FlagForwardTCP, "true"))
}

// except is except: like force_tcp, one setting of skydns's, taken from
// the root's forward only.
func (t *translator) except(a at, domains []string, root bool) {
	switch {
	case !root:
		t.refuse(a, "skydns excepts names from its default upstreams only: except in the forward of . only")
	case len(domains) == 0:
		t.refuse(a, "except takes one domain or more")
	default:
		for _, d := range domains {
			if _, why := normalZone(d); why != "" {
				t.refuse(a, d+": "+why)
				return
			}
		}
		t.use(a, "names under these domains are not forwarded: SERVFAIL", sky(forward.FlagForwardExcept, strings.Join(domains, ",")))
	}
}

func (t *translator) maxConcurrent(a at, args []string) {
	if len(args) != 1 {
		t.refuse(a, "max_concurrent takes one number")
		return
	}
	n, why := count(args[0], 1, 1<<30)
	if why != "" {
		t.refuse(a, why)
		return
	}
	t.use(a, "queries in flight to one upstream; beyond it the next upstream is asked, else SERVFAIL (CoreDNS: REFUSED)",
		sky(forward.FlagMaxConcurrent, strconv.Itoa(n)))
}

func (t *translator) policy(a at, args []string) {
	switch {
	case len(args) != 1:
		t.refuse(a, "policy takes random, round_robin or sequential")
	case args[0] == "round_robin":
		t.use(a, "skydns's healthy upstreams take turns")
	case args[0] == "random":
		t.ignore(a, "skydns's healthy upstreams take turns, which spreads queries as evenly")
	default:
		t.refuse(a, fmt.Sprintf("skydns's healthy upstreams take turns; it has no %q policy", args[0]))
	}
}

func (t *translator) healthCheck(a at, args []string) {
	if len(args) == 0 {
		t.refuse(a, "health_check takes a duration")
		return
	}
	d, why := parseDuration(args[0])
	for _, x := range args[1:] {
		if x != "no_rec" && why == "" {
			why = "skydns probes a down upstream for the root's NS with RD clear (no_rec); it has no " + strconv.Quote(x)
		}
	}
	if why != "" {
		t.refuse(a, why)
		return
	}
	t.use(a, "a down upstream is probed this often, for the root's NS with RD clear", sky(forward.FlagHealthCheck, d.String()))
}

func (t *translator) forwardTLS(a at, args []string) {
	switch len(args) {
	case 0:
		t.use(a, "DNS over TLS upstreams are verified against the system's roots")
	case 1:
		t.use(a, "DNS over TLS upstreams are verified against this CA file", sky(forward.FlagUpstreamTLSCA, args[0]))
	default:
		t.refuse(a, "skydns presents no client certificate to upstreams")
	}
}

func (t *translator) failover(a at, args []string) {
	for _, rcode := range args {
		if strings.EqualFold(rcode, "NXDOMAIN") || strings.EqualFold(rcode, "NOERROR") || strings.EqualFold(rcode, "YXDOMAIN") {
			t.refuse(a, "skydns returns an upstream's "+rcode+" as it is")
			return
		}
	}
	t.use(a, "skydns asks the next upstream after any rcode but NOERROR, NXDOMAIN and YXDOMAIN")
}
