package forward

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
)

func TestStubDomainsFromFlags(t *testing.T) {
	def := startUpstream(t, answerA("192.0.2.1", 60))
	corp := startUpstream(t, answerA("192.0.2.2", 60))
	deep := startUpstream(t, answerA("192.0.2.3", 60))
	cfg := testConfig(def.addr)
	cfg.StubDomains = []string{"Example.Corp=" + corp.addr, "deep.example.corp.=" + deep.addr}
	f, _, _ := testForwarder(t, cfg)

	for _, tt := range []struct{ name, want string }{
		{"www.example.corp.", "192.0.2.2"},
		{"example.corp.", "192.0.2.2"},
		{"x.deep.example.corp.", "192.0.2.3"},
		{"deep.example.corp.", "192.0.2.3"},
		{"notexample.corp.", "192.0.2.1"},
		{"www.example.org.", "192.0.2.1"},
	} {
		t.Run(tt.name+" goes to the server of its longest stub domain", func(t *testing.T) {
			wantA(t, ask(t, f, tt.name, dns.TypeA), tt.want, 60)
		})
	}

	t.Run("stub answers are cached too", func(t *testing.T) {
		before := corp.queries()
		wantA(t, ask(t, f, "www.example.corp.", dns.TypeA), "192.0.2.2", 60)
		if corp.queries() != before {
			t.Errorf("stub server asked again: %d queries, want %d", corp.queries(), before)
		}
	})
}

func TestSetStubs(t *testing.T) {
	def := startUpstream(t, answerA("192.0.2.1", 60))
	live := startUpstream(t, answerA("192.0.2.4", 60))
	flagged := startUpstream(t, answerA("192.0.2.5", 60))
	cfg := testConfig(def.addr)
	cfg.StubDomains = []string{"flagged.corp=" + flagged.addr}
	f, _, _ := testForwarder(t, cfg)

	t.Run("a stub domain added by the server is used at once", func(t *testing.T) {
		wantA(t, ask(t, f, "www.live.corp.", dns.TypeA), "192.0.2.1", 60)
		f.SetStubs(map[string][]string{"live.corp.": {live.addr}})
		wantA(t, ask(t, f, "www.live.corp.", dns.TypeA), "192.0.2.4", 60)
	})

	t.Run("a domain from --stub-domain wins over the same domain from the server", func(t *testing.T) {
		f.SetStubs(map[string][]string{"live.corp.": {live.addr}, "flagged.corp": {live.addr}})
		wantA(t, ask(t, f, "www.flagged.corp.", dns.TypeA), "192.0.2.5", 60)
	})

	t.Run("invalid entries are left out and the rest still applies", func(t *testing.T) {
		f.SetStubs(map[string][]string{
			"live.corp.":  {"not-an-ip", live.addr},
			"bad..domain": {live.addr},
			".":           {live.addr},
		})
		wantA(t, ask(t, f, "other.live.corp.", dns.TypeA), "192.0.2.4", 60)
		if len(f.stubProblems) != 3 {
			t.Errorf("problems %v, want 3", f.stubProblems)
		}
	})

	t.Run("a removed stub domain goes back to the upstreams, cache or not", func(t *testing.T) {
		f.SetStubs(nil)
		wantA(t, ask(t, f, "www.live.corp.", dns.TypeA), "192.0.2.1", 60)
		wantA(t, ask(t, f, "www.flagged.corp.", dns.TypeA), "192.0.2.5", 60)
	})
}

func TestStubServersThatAreThisServerAreLeftOut(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.1", 60))
	cfg := testConfig(up.addr)
	cfg.ListenAddrs = []string{"127.0.0.1:5353"}
	cfg.StubDomains = []string{"loop.corp=127.0.0.1:5353"}
	f, _, _ := testForwarder(t, cfg)
	f.SetStubs(map[string][]string{"loop2.corp": {"127.0.0.1:5353"}})
	if table := *f.stubs.Load(); len(table) != 0 {
		t.Errorf("stub table %v, want empty", table)
	}
}

func TestStubTableLookup(t *testing.T) {
	table := newStubTable(map[string][]netip.AddrPort{
		"corp.":         {netip.MustParseAddrPort("127.0.0.1:1")},
		"example.corp.": {netip.MustParseAddrPort("127.0.0.1:2")},
	})
	for name, want := range map[string]string{
		"corp.": "corp.", "a.corp.": "corp.", "example.corp.": "example.corp.",
		"a.b.example.corp.": "example.corp.", "xexample.corp.": "corp.", "example.org.": "", ".": "",
	} {
		got := ""
		if r := table.lookup(name); r != nil {
			got = r.domain
		}
		if got != want {
			t.Errorf("lookup(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestStubFromRecord(t *testing.T) {
	if got := StubKeyPrefix("/skydns", "cluster.local."); got != "/skydns/local/cluster/dns/stub/" {
		t.Errorf("StubKeyPrefix = %q", got)
	}
	tests := []struct {
		name, key string
		rec       contract.Record
		domain    string
		server    string
		err       string
	}{
		{"a record with host and port", "/skydns/local/cluster/dns/stub/corp/example/ns1",
			contract.Record{Host: "10.0.0.53", Port: 5353}, "example.corp.", "10.0.0.53:5353", ""},
		{"a record without a port uses 53", "/skydns/local/cluster/dns/stub/corp/example/ns2",
			contract.Record{Host: "fd00::53"}, "example.corp.", "[fd00::53]:53", ""},
		{"a host that is a name is rejected", "/skydns/local/cluster/dns/stub/corp/example/ns1",
			contract.Record{Host: "ns.example.corp."}, "", "", "not an IP address"},
		{"a key without a label below the domain is rejected", "/skydns/local/cluster/dns/stub/corp",
			contract.Record{Host: "10.0.0.53"}, "", "", "want /skydns/local/cluster/dns/stub/<domain reversed>/<label>"},
		{"a key outside the stub prefix is rejected", "/skydns/local/cluster/svc/default/web/x",
			contract.Record{Host: "10.0.0.53"}, "", "", "want"},
		{"a stub for a name inside the zone is rejected", "/skydns/local/cluster/dns/stub/local/cluster/svc/ns1",
			contract.Record{Host: "10.0.0.53"}, "", "", "inside the zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			domain, server, err := StubFromRecord("/skydns", "cluster.local.", tt.key, tt.rec)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || domain != tt.domain || server != tt.server {
				t.Fatalf("got %q %q %v, want %q %q", domain, server, err, tt.domain, tt.server)
			}
		})
	}
}
