package dnsserver

import (
	"context"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
)

// panicReports records what Config.Panicked is told.
type panicReports struct {
	mu      sync.Mutex
	paths   []string
	packets [][]byte
}

func (p *panicReports) add(path string, packet []byte, _ any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths = append(p.paths, path)
	p.packets = append(p.packets, packet)
}

func TestAPanickingAnswerIsAnsweredServfailAndTheServerGoesOn(t *testing.T) {
	answer := records(1)
	boom := RespondFunc(func(ctx context.Context, q Query) *dns.Msg {
		if q.Msg.Question[0].Name == "boom.test." {
			panic("responder bug")
		}
		return answer(ctx, q)
	})
	reports := &panicReports{}
	s := startServerWith(t, Config{Responder: boom, Panicked: reports.add})
	for _, proto := range []string{"udp", "tcp"} {
		t.Run(proto, func(t *testing.T) {
			resp := dnstest.Exchange(t, proto, s.Addr(), query("boom.test.", dns.TypeA, 0))
			if resp.Rcode != dns.RcodeServerFailure || len(resp.Question) != 1 {
				t.Fatalf("got rcode %s with %d questions, want SERVFAIL with the question", dns.RcodeToString[resp.Rcode], len(resp.Question))
			}
			if resp := dnstest.Exchange(t, proto, s.Addr(), query("big.test.", dns.TypeA, 0)); len(resp.Answer) != 1 {
				t.Fatalf("after the panic: %d answers, want 1", len(resp.Answer))
			}
		})
	}
	reports.mu.Lock()
	defer reports.mu.Unlock()
	if len(reports.paths) != 2 || reports.paths[0] != "udp" || reports.paths[1] != "tcp" {
		t.Fatalf("Panicked told of paths %v, want [udp tcp]", reports.paths)
	}
	for _, p := range reports.packets {
		m := new(dns.Msg)
		if err := m.Unpack(p); err != nil || m.Question[0].Name != "boom.test." {
			t.Fatalf("Panicked's packet %x is not the query (%v)", p, err)
		}
	}
}
