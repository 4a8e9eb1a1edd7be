package fastpath

import (
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestStatsSumTheShards(t *testing.T) {
	s := NewStats([]float64{0.001, 0.01})
	fast, ordinary := s.NewShard(true), s.NewShard(false)
	fast.add(statIndex(dns.TypeA, dns.RcodeSuccess))
	fast.add(statIndex(dns.TypeA, dns.RcodeSuccess))
	fast.pass()
	ordinary.Count(dns.TypeA, true, dns.RcodeSuccess)
	ordinary.Count(0xfff0, true, 4000) // an unknown type and rcode
	ordinary.Count(0, false, dns.RcodeFormatError)
	fast.Observe("udp", 500*time.Microsecond, 3)
	ordinary.Observe("udp", 5*time.Millisecond, 1)
	ordinary.Observe("tcp", time.Second, 1)

	got := map[string]uint64{}
	s.EachAnswer(func(qtype, rcode string, n uint64) { got[qtype+"/"+rcode] = n })
	want := map[string]uint64{"A/NOERROR": 3, "other/other": 1, "none/FORMERR": 1}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if n := s.FastAnswers(); n != 2 {
		t.Errorf("FastAnswers = %d, want 2", n)
	}
	if n := s.Passed(); n != 1 {
		t.Errorf("Passed = %d, want 1", n)
	}
	count, sum, buckets := s.Latency("udp")
	if count != 4 || sum < 0.0064 || sum > 0.0066 || buckets[0.001] != 3 || buckets[0.01] != 4 {
		t.Errorf("udp latency: count %d sum %f buckets %v; want 4, 0.0065, {0.001:3 0.01:4}", count, sum, buckets)
	}
	if count, _, buckets := s.Latency("tcp"); count != 1 || buckets[0.01] != 0 {
		t.Errorf("tcp latency: count %d buckets %v; want 1 above every bound", count, buckets)
	}
}

func TestLabelsNameEveryCode(t *testing.T) {
	if qtypeNames[qtypeIndex[dns.TypeSRV]] != "SRV" || rcodeNames[rcodeIndex[dns.RcodeNameError]] != "NXDOMAIN" {
		t.Fatal("label tables do not name SRV and NXDOMAIN")
	}
	if qtypeNames[len(qtypeNames)-1] != "none" || qtypeNames[len(qtypeNames)-2] != "other" || rcodeNames[len(rcodeNames)-1] != "other" {
		t.Fatal("the extra labels are not last")
	}
}
