package fastpath

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestStatsSumTheShardsUnderCoreDNSLabels(t *testing.T) {
	s := NewStats("cluster.local.", "in-addr.arpa.")
	fast, ordinary := s.NewShard(true), s.NewShard(false)
	a := s.Series("cluster.local.", dns.TypeA, true, dns.RcodeSuccess)
	fast.Answered(a, UDP4, 40, 90)
	fast.Answered(a, UDP6, 40, 600)
	fast.pass()
	fast.TookEach([]Series{a, a}, 100*time.Microsecond)
	ordinary.Answered(s.Series("example.com.", 0xfff0, true, 4000), NewTransport(true, false), 50, 5000) // unknown zone, type, rcode
	ordinary.Answered(s.Series("", 0, false, dns.RcodeFormatError), UDP4, 12, 12)
	ordinary.Took(a, 3*time.Millisecond)
	totals := s.Totals()

	requests := map[string]uint64{}
	totals.EachRequest(func(zone string, tr Transport, qtype string, n uint64) {
		requests[fmt.Sprintf("%s %s %s %s", zone, tr.Proto(), tr.Family(), qtype)] = n
	})
	wantMap(t, "requests", requests, map[string]uint64{
		"cluster.local. udp 1 A": 1, "cluster.local. udp 2 A": 1, ". tcp 1 other": 1, ". udp 1 other": 1,
	})
	responses := map[string]uint64{}
	totals.EachResponse(func(zone, rcode string, n uint64) { responses[zone+" "+rcode] = n })
	wantMap(t, "responses", responses, map[string]uint64{"cluster.local. NOERROR": 2, ". other": 1, ". FORMERR": 1})

	latency := map[string]Histogram{}
	totals.EachLatency(func(zone, qtype string, h Histogram) { latency[zone+" "+qtype] = h })
	h := latency["cluster.local. A"]
	if len(latency) != 1 || h.Count != 3 || h.Cumulative[0.00025] != 2 || h.Cumulative[0.004] != 3 || h.Sum < 0.00319 || h.Sum > 0.00321 {
		t.Errorf("latency = %v; want only cluster.local. A: 3 queries, 2 within 0.25 ms, all within 4 ms, 3.2 ms in all", latency)
	}
	sizes := map[string]Histogram{}
	totals.EachSize(true, func(zone, proto string, h Histogram) { sizes[zone+" "+proto] = h })
	h = sizes["cluster.local. udp"]
	if len(sizes) != 3 || h.Count != 2 || h.Cumulative[100] != 1 || h.Cumulative[1023] != 2 || h.Sum != 690 {
		t.Errorf("response sizes = %v; want 3 series, cluster.local. udp with 90 and 600 bytes", sizes)
	}
	if totals.FastAnswers != 2 || totals.Passed != 1 {
		t.Errorf("fast answers %d, passed %d; want 2, 1", totals.FastAnswers, totals.Passed)
	}
}

func wantMap(t *testing.T, what string, got, want map[string]uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %q = %d, want %d (all: %v)", what, k, got[k], n, got)
		}
	}
}

func TestCountingAnAnswerAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	s := NewStats("cluster.local.")
	sh := s.NewShard(true)
	batch := []Series{s.Series("cluster.local.", dns.TypeSRV, true, dns.RcodeNameError)}
	allocs := testing.AllocsPerRun(100, func() {
		sh.Answered(batch[0], UDP4, 45, 120)
		sh.TookEach(batch, 20*time.Microsecond)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per answer counted, want 0", allocs)
	}
}

func TestBucketsAreCoreDNSs(t *testing.T) {
	if len(timeBounds) != 16 || timeBounds[0] != 0.00025 || timeBounds[15] != 8.192 {
		t.Errorf("time bounds %v: want 0.25 ms doubling 16 times to 8.192 s", timeBounds)
	}
	for n, want := range map[int]int{0: 0, 1: 1, 100: 1, 101: 2, 511: 5, 512: 6, 64000: 13, 65535: 14} {
		if got := sizeBucket(n); got != want {
			t.Errorf("sizeBucket(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestLabelsNameTheMonitoredTypesAndEveryRcode(t *testing.T) {
	if qtypeNames[qtypeIndex[dns.TypeSRV]] != "SRV" || rcodeNames[rcodeIndex[dns.RcodeNameError]] != "NXDOMAIN" {
		t.Fatal("label tables do not name SRV and NXDOMAIN")
	}
	if qtypeNames[len(qtypeNames)-1] != "other" || rcodeNames[len(rcodeNames)-1] != "other" {
		t.Fatal(`"other" is not last`)
	}
	if len(qtypeNames) > 256 || len(rcodeNames) > 256 {
		t.Fatal("a Series holds type and rcode indexes in a byte")
	}
}
