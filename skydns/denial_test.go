package skydns

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
)

// TestFastPathDeniesNamesBelowADeniedName asks what a pod's search walk
// asks for external names (many names below a few that do not exist):
// every answer is the ordinary path's, and the fast path keeps one answer
// for each denied name and type, not one for each name asked.
func TestFastPathDeniesNamesBelowADeniedName(t *testing.T) {
	d := newDifferential(t)
	walk := func(i int) []string {
		base := fmt.Sprintf("host%d.example.com", i)
		return []string{base + ".default.svc.cluster.local.", base + ".svc.cluster.local.", base + ".cluster.local."}
	}
	for _, name := range walk(0) {
		d.servedTwice(t, searchQuery(name, dns.TypeA, 1232))
	}
	kept := d.cache.Len()
	for i := range 50 {
		for _, name := range walk(i) {
			for _, edns := range []uint16{0, 1232} {
				if !d.servedTwice(t, searchQuery(mixCase(name, uint64(i)*0x9e3779b97f4a7c15), dns.TypeA, edns)) {
					t.Fatalf("%s: not the fast path's", name)
				}
			}
		}
	}
	if n := d.cache.Len(); n != kept {
		t.Errorf("the store grew from %d to %d answers for 150 names below three denied ones, want no growth", kept, n)
	}
	for _, tc := range []struct {
		name, qname string
		rcode       int
	}{
		{"a wildcard question below a denied name", "*.example.com.default.svc.cluster.local.", dns.RcodeNameError},
		{"another type", "host1.example.com.svc.cluster.local.", dns.RcodeNameError},
	} {
		t.Run(tc.name+" is the ordinary path's answer", func(t *testing.T) {
			d.servedTwice(t, searchQuery(tc.qname, dns.TypeAAAA, 1232))
			if got := d.ordinaryRcode(t, searchQuery(tc.qname, dns.TypeAAAA, 1232)); got != tc.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[got], dns.RcodeToString[tc.rcode])
			}
		})
	}
	t.Run("a record added below a denied name is seen at once, its parents empty non-terminals", func(t *testing.T) {
		d.putRecord(contract.Key(contract.DefaultPrefix, "api.example.com.default.svc.cluster.local.")+"/x", `{"host":"10.9.0.2"}`)
		for qname, want := range map[string]int{
			"api.example.com.default.svc.cluster.local.":       dns.RcodeSuccess,
			"example.com.default.svc.cluster.local.":           dns.RcodeSuccess, // NODATA
			"com.default.svc.cluster.local.":                   dns.RcodeSuccess, // NODATA
			"host3.example.com.default.svc.cluster.local.":     dns.RcodeNameError,
			"host3.example.com.svc.cluster.local.":             dns.RcodeNameError,
			"other.api.example.com.default.svc.cluster.local.": dns.RcodeNameError,
		} {
			q := searchQuery(qname, dns.TypeA, 1232)
			d.check(t, q)
			if got := d.ordinaryAnswer(t, q); got.Rcode != want || qname == "api.example.com.default.svc.cluster.local." && len(got.Answer) != 1 {
				t.Errorf("%s: want %s, got\n%v", qname, dns.RcodeToString[want], got)
			}
		}
	})
}
