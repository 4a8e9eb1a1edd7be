package forward

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestResolveExternal(t *testing.T) {
	up := startUpstream(t, func(req *dns.Msg, _ bool) *dns.Msg {
		m := new(dns.Msg).SetReply(req)
		switch strings.ToLower(req.Question[0].Name) {
		case "db.example.org.":
			m.Answer = []dns.RR{rr("db.example.org. 300 IN CNAME primary.example.org."), rr("primary.example.org. 60 IN A 192.0.2.70")}
		case "stub.corp.":
			m.Answer = []dns.RR{rr("stub.corp. 60 IN A 192.0.2.71")}
		default:
			m.Rcode = dns.RcodeNameError
		}
		return m
	})
	stub := startUpstream(t, answerA("192.0.2.72", 30))
	cfg := testConfig(up.addr)
	cfg.StubDomains = []string{"corp=" + stub.addr}
	f, _, _ := testForwarder(t, cfg)

	t.Run("a target behind a CNAME chain gives the chain and the addresses", func(t *testing.T) {
		rrs, rcode := f.ResolveExternal(t.Context(), "DB.example.org", dns.TypeA)
		if rcode != dns.RcodeSuccess || len(rrs) != 2 {
			t.Fatalf("rcode %s answer %v, want the CNAME and the A", dns.RcodeToString[rcode], rrs)
		}
		if a, ok := rrs[1].(*dns.A); !ok || a.A.String() != "192.0.2.70" {
			t.Errorf("last record %v, want A 192.0.2.70", rrs[1])
		}
	})

	t.Run("a target in a stub domain is chased through the stub's server", func(t *testing.T) {
		rrs, rcode := f.ResolveExternal(t.Context(), "stub.corp.", dns.TypeA)
		if rcode != dns.RcodeSuccess || len(rrs) != 1 || rrs[0].(*dns.A).A.String() != "192.0.2.72" {
			t.Fatalf("rcode %s answer %v, want A 192.0.2.72", dns.RcodeToString[rcode], rrs)
		}
	})

	t.Run("a target that does not exist is NXDOMAIN", func(t *testing.T) {
		rrs, rcode := f.ResolveExternal(t.Context(), "gone.example.org.", dns.TypeA)
		if rcode != dns.RcodeNameError || len(rrs) != 0 {
			t.Fatalf("rcode %s answer %v, want NXDOMAIN and nothing", dns.RcodeToString[rcode], rrs)
		}
	})

	t.Run("a target no upstream answers for is SERVFAIL", func(t *testing.T) {
		dead, _, _ := testForwarder(t, testConfig(closedPort(t)))
		if _, rcode := dead.ResolveExternal(t.Context(), "db.example.org.", dns.TypeA); rcode != dns.RcodeServerFailure {
			t.Fatalf("rcode %s, want SERVFAIL", dns.RcodeToString[rcode])
		}
	})

	t.Run("chased answers are cached and their records are the caller's to change", func(t *testing.T) {
		before := up.queries()
		rrs, _ := f.ResolveExternal(t.Context(), "db.example.org.", dns.TypeA)
		rrs[0].Header().Ttl = 1
		again, _ := f.ResolveExternal(t.Context(), "db.example.org.", dns.TypeA)
		if up.queries() != before || again[0].Header().Ttl != 300 {
			t.Errorf("upstream queries %d (want %d), TTL %d (want 300)", up.queries(), before, again[0].Header().Ttl)
		}
	})
}
