package rrl

import (
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func testLimiter(cfg Config) (*Limiter, *clock) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	if cfg.IPv4PrefixLen == 0 {
		cfg.IPv4PrefixLen, cfg.IPv6PrefixLen = 24, 56
	}
	return newLimiter(cfg, c.now), c
}

// decide returns the actions for n responses to client.
func decide(l *Limiter, client string, n int) map[Action]int {
	got := map[Action]int{}
	for range n {
		got[l.Decide(netip.MustParseAddr(client))]++
	}
	return got
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		flood     string // sends 100 responses at one instant
		other     string // then 5 more
		wantFlood map[Action]int
		wantOther map[Action]int
	}{
		{"a flood gets its rate, then every second dropped response slips",
			Config{ResponsesPerSecond: 10, Slip: 2}, "192.0.2.1", "198.51.100.1",
			map[Action]int{Send: 10, Drop: 45, Slip: 45}, map[Action]int{Send: 5}},
		{"slip 0 drops everything past the rate",
			Config{ResponsesPerSecond: 10}, "192.0.2.1", "198.51.100.1",
			map[Action]int{Send: 10, Drop: 90}, map[Action]int{Send: 5}},
		{"a neighbour in the same /24 shares the bucket",
			Config{ResponsesPerSecond: 10}, "192.0.2.1", "192.0.2.200",
			map[Action]int{Send: 10, Drop: 90}, map[Action]int{Drop: 5}},
		{"with /32 networks a neighbour has its own",
			Config{ResponsesPerSecond: 10, IPv4PrefixLen: 32, IPv6PrefixLen: 128}, "192.0.2.1", "192.0.2.200",
			map[Action]int{Send: 10, Drop: 90}, map[Action]int{Send: 5}},
		{"IPv6 clients are grouped by /56",
			Config{ResponsesPerSecond: 10}, "2001:db8:0:1::1", "2001:db8:0:2::1",
			map[Action]int{Send: 10, Drop: 90}, map[Action]int{Drop: 5}},
		{"an exempt network is never limited",
			Config{ResponsesPerSecond: 10, Exempt: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}, "192.0.2.1", "192.0.2.2",
			map[Action]int{Send: 100}, map[Action]int{Send: 5}},
		{"an IPv4-mapped address is its IPv4 network",
			Config{ResponsesPerSecond: 10}, "::ffff:192.0.2.1", "192.0.2.2",
			map[Action]int{Send: 10, Drop: 90}, map[Action]int{Drop: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := testLimiter(tt.cfg)
			if got := decide(l, tt.flood, 100); !equal(got, tt.wantFlood) {
				t.Errorf("flood: %v, want %v", got, tt.wantFlood)
			}
			if got := decide(l, tt.other, 5); !equal(got, tt.wantOther) {
				t.Errorf("other: %v, want %v", got, tt.wantOther)
			}
		})
	}
}

func equal(a, b map[Action]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRefill(t *testing.T) {
	l, c := testLimiter(Config{ResponsesPerSecond: 10})
	decide(l, "192.0.2.1", 10)
	c.t = c.t.Add(300 * time.Millisecond)
	if got := decide(l, "192.0.2.1", 5); got[Send] != 3 || got[Drop] != 2 {
		t.Errorf("after 300ms: %v, want 3 sent (refilled) and 2 dropped", got)
	}
	c.t = c.t.Add(time.Hour)
	if got := decide(l, "192.0.2.1", 15); got[Send] != 10 {
		t.Errorf("after an hour: %v, want a full bucket of 10, not more", got)
	}
}

func TestOffIsNil(t *testing.T) {
	if New(Config{}) != nil {
		t.Error("New with no rate should return nil")
	}
}

func TestIdleNetworksAreForgotten(t *testing.T) {
	l, c := testLimiter(Config{ResponsesPerSecond: 1, IPv4PrefixLen: 32})
	for i := range maxNetworks {
		l.Decide(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	c.t = c.t.Add(time.Second)
	l.Decide(netip.MustParseAddr("192.0.2.1"))
	if n := len(l.buckets); n != 1 {
		t.Errorf("%d buckets after the idle ones were due, want 1", n)
	}
}

func TestTruncate(t *testing.T) {
	m := new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA)
	m.Response = true
	rr, _ := dns.NewRR("www.example.org. 60 IN A 192.0.2.1")
	m.Answer = []dns.RR{rr}
	m.SetEdns0(1232, false)
	wire, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	var got dns.Msg
	if err := got.Unpack(Truncate(wire)); err != nil {
		t.Fatalf("truncated answer does not parse: %v", err)
	}
	if !got.Truncated || len(got.Answer)+len(got.Ns)+len(got.Extra) != 0 || got.Question[0] != m.Question[0] || got.Id != m.Id {
		t.Errorf("truncated: %v", &got)
	}
	for _, bad := range [][]byte{nil, wire[:11], wire[:14], {0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0}} {
		if Truncate(append([]byte(nil), bad...)) != nil {
			t.Errorf("Truncate(%x) should be nil", bad)
		}
	}
}

// BenchmarkDecide is the cost RRL adds to one answer: exempt clients (the
// in-cluster default) and limited ones.
func BenchmarkDecide(b *testing.B) {
	l := New(Config{ResponsesPerSecond: 1000, Slip: 2, IPv4PrefixLen: 24, IPv6PrefixLen: 56,
		Exempt: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	for _, c := range []struct{ name, addr string }{{"exempt", "10.1.2.3"}, {"limited", "192.0.2.1"}} {
		client := netip.MustParseAddr(c.addr)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				l.Decide(client)
			}
		})
	}
}
