package resolver_test

import (
	"testing"

	"github.com/miekg/dns"
)

// FuzzResolve feeds packed queries to Resolve: it must never panic, must
// answer with the query's ID, and its response must pack.
func FuzzResolve(f *testing.F) {
	seeds := []struct {
		name  string
		qtype uint16
	}{
		{"web.default.svc.cluster.local.", dns.TypeA},
		{"WEB.*.svc.cluster.local.", dns.TypeAAAA},
		{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV},
		{"a.loop.cluster.local.", dns.TypeTXT},
		{"cluster.local.", dns.TypeNS},
		{"cluster.local.", dns.TypeANY},
		{"1.0.96.10.in-addr.arpa.", dns.TypePTR},
		{"mail.cluster.local.", dns.TypeMX},
		{"strip.cluster.local.", dns.TypeSRV},
		{"example.com.", dns.TypeA},
	}
	for _, s := range seeds {
		m := new(dns.Msg).SetQuestion(s.name, s.qtype)
		m.Id = 99
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	r, snap := newResolver(f), clusterSnapshot(f)
	f.Fuzz(func(t *testing.T, packed []byte) {
		req := new(dns.Msg)
		if err := req.Unpack(packed); err != nil {
			return
		}
		resp := r.Resolve(snap, req)
		if resp == nil {
			t.Fatal("Resolve returned nil")
		}
		if resp.Id != req.Id || !resp.Response {
			t.Fatalf("response id %d (response %v), want %d", resp.Id, resp.Response, req.Id)
		}
		if _, err := resp.Pack(); err != nil {
			t.Fatalf("response does not pack: %v\n%v", err, resp)
		}
		r.ExternalTarget(resp)
	})
}
