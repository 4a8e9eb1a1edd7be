package fastpath

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// packed packs a response to a question for qname and qtype with the
// given answer and additional records (zone-file text), compressed, with
// an OPT record last, as a Source does.
func packed(t testing.TB, qname string, qtype uint16, answer, extra []string) []byte {
	t.Helper()
	m := new(dns.Msg).SetQuestion(qname, qtype)
	m.Response, m.Compress = true, true
	for _, text := range answer {
		m.Answer = append(m.Answer, mustRR(t, text))
	}
	for _, text := range extra {
		m.Extra = append(m.Extra, mustRR(t, text))
	}
	m.SetEdns0(fakeMaxUDPSize, false)
	wire, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return wire
}

func mustRR(t testing.TB, text string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(text)
	if err != nil {
		t.Fatalf("bad record %q: %v", text, err)
	}
	return rr
}

func TestPlanRotation(t *testing.T) {
	tests := []struct {
		name          string
		qname         string
		qtype         uint16
		answer, extra []string
		ok            bool
		records       int // in the run
	}{
		{
			name: "an A RRset turns", qname: "db.x.", qtype: dns.TypeA, ok: true, records: 3,
			answer: []string{"db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2", "db.x. 30 IN A 10.0.0.3"},
		},
		{
			name: "one record has nothing to turn", qname: "db.x.", qtype: dns.TypeA, ok: true, records: 0,
			answer: []string{"db.x. 30 IN A 10.0.0.1"},
		},
		{
			name: "the addresses behind a CNAME turn, the CNAME stays first", qname: "a.x.", qtype: dns.TypeAAAA, ok: true, records: 2,
			answer: []string{"a.x. 30 IN CNAME db.y.", "db.y. 30 IN AAAA fd00::1", "db.y. 30 IN AAAA fd00::2"},
		},
		{
			name: "SRV records of one priority without glue turn", qname: "_p._tcp.s.x.", qtype: dns.TypeSRV, ok: true, records: 2,
			answer: []string{"_p._tcp.s.x. 30 IN SRV 10 50 80 a.example.", "_p._tcp.s.x. 30 IN SRV 10 50 80 bb.example."},
		},
		{
			name: "SRV records at two priorities with two each are left to the ordinary path", qname: "s.x.", qtype: dns.TypeSRV, ok: false,
			answer: []string{
				"s.x. 30 IN SRV 10 50 80 a.example.", "s.x. 30 IN SRV 10 50 80 b.example.",
				"s.x. 30 IN SRV 20 50 80 c.example.", "s.x. 30 IN SRV 20 50 80 d.example.",
			},
		},
		{
			name: "SRV records whose targets glue names point into are left to the ordinary path", qname: "s.x.", qtype: dns.TypeSRV, ok: false,
			answer: []string{"s.x. 30 IN SRV 10 50 80 a.s.x.", "s.x. 30 IN SRV 10 50 80 b.s.x."},
			extra:  []string{"a.s.x. 30 IN A 10.0.0.1", "b.s.x. 30 IN A 10.0.0.2"},
		},
		{
			name: "TXT records do not turn", qname: "t.x.", qtype: dns.TypeTXT, ok: true, records: 0,
			answer: []string{`t.x. 30 IN TXT "a"`, `t.x. 30 IN TXT "b"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := planRotation(packed(t, tt.qname, tt.qtype, tt.answer, tt.extra))
			if ok != tt.ok || (ok && int(r.n) != tt.records) {
				t.Fatalf("planRotation = %+v, %v; want ok %v and %d records", r, ok, tt.ok, tt.records)
			}
		})
	}
}

// rotatingAnswers answers every A question with the same three addresses
// behind a CNAME, marked Rotate unless still is set.
type rotatingAnswers struct {
	t     testing.TB
	still bool
}

func (rotatingAnswers) Version() uint64 { return 1 }

func (r rotatingAnswers) Fill(name string, qtype uint16) (Answer, bool) {
	wire := packed(r.t, name, qtype, []string{
		name + " 30 IN CNAME db.x.", "db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2", "db.x. 30 IN A 10.0.0.3",
	}, nil)
	return Answer{Wire: wire, Version: 1, Volatile: true, Rotate: !r.still}, true
}

func TestCachedAnswersTurnWithoutAllocating(t *testing.T) {
	c := NewCache(CacheConfig{Source: rotatingAnswers{t: t}, MaxUDPSize: fakeMaxUDPSize, MaxEntries: 10, Stats: NewStats().NewShard(true)})
	pkt, _ := aQuery("Web.x.", 1232).Pack()
	out := make([]byte, 0, fakeMaxUDPSize)
	var firsts []string
	for range 4 {
		var ok bool
		if out, _, ok = c.Reply(out, pkt, nil); !ok {
			t.Fatal("not answered")
		}
		m := unpack(t, out)
		if len(m.Answer) != 4 || m.Answer[0].Header().Rrtype != dns.TypeCNAME || m.Answer[0].Header().Name != "Web.x." {
			t.Fatalf("answer %v: want the CNAME, as asked, then three addresses", m.Answer)
		}
		var addrs []string
		for _, rr := range m.Answer[1:] {
			addrs = append(addrs, rr.(*dns.A).A.String())
		}
		firsts = append(firsts, addrs[0])
		if sorted := slices.Sorted(slices.Values(addrs)); strings.Join(sorted, " ") != "10.0.0.1 10.0.0.2 10.0.0.3" {
			t.Fatalf("addresses %v: want each of the three once", addrs)
		}
	}
	if got := strings.Join(firsts, " "); got != "10.0.0.2 10.0.0.3 10.0.0.1 10.0.0.2" {
		t.Errorf("first addresses of four replies %s, want each in turn", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { out, _, _ = c.Reply(out, pkt, nil) }); allocs != 0 {
		t.Errorf("a rotated reply allocates %.1f times, want 0", allocs)
	}
}

func TestRecordsOfDifferentSizesTurn(t *testing.T) {
	wire := packed(t, "s.x.", dns.TypeSRV, []string{
		"s.x. 30 IN SRV 10 50 80 a.example.", "s.x. 30 IN SRV 10 50 80 bb.example.", "s.x. 30 IN SRV 10 50 80 ccc.example.",
	}, nil)
	r, ok := planRotation(wire)
	if !ok || r.n != 3 || r.size != 0 {
		t.Fatalf("planRotation = %+v, %v; want three records of different sizes", r, ok)
	}
	for turn, want := range []string{"a b c", "b c a", "c a b"} {
		out := slices.Clone(wire)
		r.apply(out, string(wire), uint32(turn))
		var got []string
		for _, rr := range unpack(t, out).Answer {
			got = append(got, strings.TrimRight(rr.(*dns.SRV).Target[:1], "."))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("turn %d: targets %v, want %s", turn, got, want)
		}
	}
}

// BenchmarkReplyTurning is a cache hit on a CNAME and three addresses,
// turned and in key order.
func BenchmarkReplyTurning(b *testing.B) {
	for _, still := range []bool{false, true} {
		b.Run(map[bool]string{false: "rotate", true: "key order"}[still], func(b *testing.B) {
			c := NewCache(CacheConfig{Source: rotatingAnswers{t: b, still: still}, MaxUDPSize: fakeMaxUDPSize, MaxEntries: 10,
				Stats: NewStats().NewShard(true)})
			pkt, _ := aQuery("web.x.", 1232).Pack()
			out := make([]byte, 0, fakeMaxUDPSize)
			for b.Loop() {
				out, _, _ = c.Reply(out, pkt, nil)
			}
		})
	}
}

// FuzzPlanRotation feeds planRotation any bytes: it must not panic, and a
// message it turns must unpack as before, with the same records.
func FuzzPlanRotation(f *testing.F) {
	f.Add(packed(f, "db.x.", dns.TypeA, []string{"db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2"}, nil))
	f.Add(packed(f, "s.x.", dns.TypeSRV, []string{"s.x. 30 IN SRV 10 50 80 a.s.x.", "s.x. 30 IN SRV 10 50 80 bb.s.x."}, []string{"a.s.x. 30 IN A 10.0.0.1"}))
	f.Add(packed(f, "a.x.", dns.TypeA, []string{"a.x. 30 IN CNAME db.y.", "db.y. 30 IN A 10.0.0.1", "db.y. 30 IN A 10.0.0.2"}, nil))
	f.Fuzz(func(t *testing.T, wire []byte) {
		r, ok := planRotation(wire)
		if !ok || r.n < 2 {
			return
		}
		before := new(dns.Msg)
		if before.Unpack(wire) != nil {
			return
		}
		out := slices.Clone(wire)
		r.apply(out, string(wire), 1)
		after := new(dns.Msg)
		if err := after.Unpack(out); err != nil {
			t.Fatalf("turned message does not unpack: %v", err)
		}
		if got, want := rrTexts(after.Answer), rrTexts(before.Answer); strings.Join(slices.Sorted(slices.Values(got)), "\n") != strings.Join(slices.Sorted(slices.Values(want)), "\n") {
			t.Fatalf("turned answer %q, want the records of %q", got, want)
		}
	})
}

func rrTexts(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}
