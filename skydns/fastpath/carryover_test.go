package fastpath

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"
)

// depAnswers answers every name under "test." with one A record whose TTL
// is the version, and says the answer is made from the name and from
// "target.test.", or is volatile for names starting with "v.". Negative
// answers ("nx." names) carry an SOA whose serial is the version.
type depAnswers struct {
	version  uint64
	computed map[string]int
}

func (d *depAnswers) Version() uint64 { return d.version }

func (d *depAnswers) Fill(name string, qtype uint16) (Answer, bool) {
	d.computed[name]++
	req := new(dns.Msg)
	req.Question = []dns.Question{{Name: name, Qtype: qtype, Qclass: dns.ClassINET}}
	resp := new(dns.Msg).SetReply(req)
	if name[:3] == "nx." {
		resp.Rcode = dns.RcodeNameError
		resp.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: "test.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 30},
			Ns: "ns.test.", Mbox: "hostmaster.test.", Serial: uint32(d.version), Minttl: 30}}
	} else {
		resp.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: uint32(d.version)},
			A: []byte{10, 0, 0, 1}}}
	}
	resp.SetEdns0(fakeMaxUDPSize, false)
	resp.Compress = true
	wire, err := resp.Pack()
	a := Answer{Wire: wire, Version: d.version, Names: []string{name, "target.test."}, SerialIsVersion: true}
	a.Volatile = name[:2] == "v."
	return a, err == nil
}

func TestCachesKeepWhatAChangeDidNotTouch(t *testing.T) {
	names := []string{"a.x.test.", "b.x.test.", "c.y.test.", "v.test.", "nx.test."}
	tests := []struct {
		name    string
		changed []string
		full    bool
		dropped []string
	}{
		{"a change at a name drops its answers", []string{"a.x.test."}, false, []string{"a.x.test.", "v.test."}},
		{"a change below a name drops it", []string{"deep.b.x.test."}, false, []string{"b.x.test.", "v.test."}},
		{"a change at a shared ancestor's child leaves the siblings", []string{"z.x.test."}, false, []string{"v.test."}},
		{"a change above a name leaves it", []string{"x.test."}, false, []string{"v.test."}},
		{"a change at a name answers were made from drops them all", []string{"target.test."}, false, names},
		{"a change of case is the same change", []string{"C.Y.TEST."}, false, []string{"c.y.test.", "v.test."}},
		{"a full change drops everything", nil, true, names},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &depAnswers{version: 3, computed: map[string]int{}}
			changes := NewChanges()
			c := NewCache(CacheConfig{Source: src, Changes: changes, MaxUDPSize: fakeMaxUDPSize, MaxEntries: 100, Stats: NewStats().NewShard(true)})
			ask := func(name string) *dns.Msg {
				t.Helper()
				got, ok := reply(c, aQuery(name, 0))
				if !ok {
					t.Fatalf("%s not answered", name)
				}
				return unpack(t, got)
			}
			for _, n := range names {
				ask(n)
			}
			changes.Record(3, 4, tc.changed, tc.full)
			src.version = 4
			c.Refresh()
			for _, n := range names {
				resp := ask(n)
				wantComputed := 1
				if contains(tc.dropped, n) {
					wantComputed = 2
				}
				if src.computed[n] != wantComputed {
					t.Errorf("%s computed %d times, want %d", n, src.computed[n], wantComputed)
				}
				if resp.Rcode == dns.RcodeNameError && resp.Ns[0].(*dns.SOA).Serial != 4 {
					t.Errorf("%s: SOA serial %d kept, want the new version 4", n, resp.Ns[0].(*dns.SOA).Serial)
				}
			}
		})
	}
}

func TestChangesNotRecordedDropEverything(t *testing.T) {
	src := &depAnswers{version: 3, computed: map[string]int{}}
	changes := NewChanges()
	c := NewCache(CacheConfig{Source: src, Changes: changes, MaxUDPSize: fakeMaxUDPSize, MaxEntries: 100, Stats: NewStats().NewShard(true)})
	reply(c, aQuery("a.test.", 0))
	src.version = 5 // 3 → 5 never recorded
	c.Refresh()
	if c.Len() != 0 {
		t.Fatalf("%d answers kept across an unknown change", c.Len())
	}
}

func TestTheDependencyIndexIsBounded(t *testing.T) {
	src := &depAnswers{version: 1, computed: map[string]int{}}
	changes := NewChanges()
	c := NewCache(CacheConfig{Source: src, Changes: changes, MaxUDPSize: fakeMaxUDPSize, MaxEntries: 10, Stats: NewStats().NewShard(true)})
	for v := uint64(1); v < 50; v++ {
		reply(c, aQuery(fmt.Sprintf("n%d.test.", v%5), 0))
		changes.Record(v, v+1, []string{fmt.Sprintf("other%d.test.", v)}, false)
		src.version = v + 1
		c.Refresh()
		if c.store.refs > 4*10+2 {
			t.Fatalf("version %d: %d index references for %d entries", v, c.store.refs, c.Len())
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
