package resolver_test

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
)

// TestRotate shows which records Rotate turns and which keep their place.
func TestRotate(t *testing.T) {
	tests := []struct {
		name string
		turn uint
		in   []string
		want []string
	}{
		{
			name: "an A RRset starts one record further on each turn",
			turn: 1,
			in:   []string{"db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2", "db.x. 30 IN A 10.0.0.3"},
			want: []string{"db.x. 30 IN A 10.0.0.2", "db.x. 30 IN A 10.0.0.3", "db.x. 30 IN A 10.0.0.1"},
		},
		{
			name: "turns wrap around the RRset",
			turn: 5,
			in:   []string{"db.x. 30 IN AAAA fd00::1", "db.x. 30 IN AAAA fd00::2", "db.x. 30 IN AAAA fd00::3"},
			want: []string{"db.x. 30 IN AAAA fd00::3", "db.x. 30 IN AAAA fd00::1", "db.x. 30 IN AAAA fd00::2"},
		},
		{
			name: "a CNAME keeps its place before the addresses it leads to",
			turn: 1,
			in:   []string{"a.x. 30 IN CNAME db.x.", "db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2"},
			want: []string{"a.x. 30 IN CNAME db.x.", "db.x. 30 IN A 10.0.0.2", "db.x. 30 IN A 10.0.0.1"},
		},
		{
			name: "SRV records rotate within one priority only",
			turn: 1,
			in: []string{
				"s.x. 30 IN SRV 10 50 80 a.x.", "s.x. 30 IN SRV 10 50 80 b.x.",
				"s.x. 30 IN SRV 20 50 80 c.x.", "s.x. 30 IN SRV 20 50 80 d.x.",
			},
			want: []string{
				"s.x. 30 IN SRV 10 50 80 b.x.", "s.x. 30 IN SRV 10 50 80 a.x.",
				"s.x. 30 IN SRV 20 50 80 d.x.", "s.x. 30 IN SRV 20 50 80 c.x.",
			},
		},
		{
			name: "TXT records keep their order",
			turn: 1,
			in:   []string{`t.x. 30 IN TXT "a"`, `t.x. 30 IN TXT "b"`},
			want: []string{`t.x. 30 IN TXT "a"`, `t.x. 30 IN TXT "b"`},
		},
		{
			name: "turn 0 keeps the order",
			turn: 0,
			in:   []string{"db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2"},
			want: []string{"db.x. 30 IN A 10.0.0.1", "db.x. 30 IN A 10.0.0.2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := new(dns.Msg)
			for _, text := range tt.in {
				resp.Answer = append(resp.Answer, mustRR(t, text))
			}
			resolver.Rotate(resp, tt.turn)
			var got, want []string
			for _, rr := range resp.Answer {
				got = append(got, rr.String())
			}
			for _, text := range tt.want {
				want = append(want, mustRR(t, text).String())
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("rotated answer:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
			}
		})
	}
}

func mustRR(t *testing.T, text string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(text)
	if err != nil {
		t.Fatalf("bad record %q: %v", text, err)
	}
	return rr
}
