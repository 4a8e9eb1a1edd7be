package dnsserver

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/fastpath"
)

// blocking answers "wait.test." once release is closed, counting how many
// such queries it holds at once; anything else at once.
type blocking struct {
	release       chan struct{}
	holding, most atomic.Int64
	records       RespondFunc
}

func (b *blocking) Respond(ctx context.Context, q Query) *dns.Msg {
	if q.Msg.Question[0].Name == "wait.test." {
		n := b.holding.Add(1)
		for m := b.most.Load(); n > m && !b.most.CompareAndSwap(m, n); m = b.most.Load() {
		}
		<-b.release
		b.holding.Add(-1)
	}
	return b.records(ctx, q)
}

func TestTheOrdinaryPathHoldsAtMostUDPMaxInFlightQueries(t *testing.T) {
	const limit = 4
	b := &blocking{release: make(chan struct{}), records: records(1)}
	s := startServerWith(t, Config{Responder: b, UDPMaxInFlight: limit})
	conn, err := net.Dial("udp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for id := range 3 * limit {
		m := query("wait.test.", dns.TypeA, 0)
		m.Id = uint16(id)
		wire, _ := m.Pack()
		conn.Write(wire)
	}
	polltest.Within(t, 5*time.Second, "queries held by the responder", func() error {
		if got := b.holding.Load(); got < limit {
			return fmt.Errorf("%d queries held by the responder, want %d", got, limit)
		}
		return nil
	})
	if got := b.holding.Load(); got != limit {
		t.Fatalf("%d queries held by the responder, want %d", got, limit)
	}
	close(b.release)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range 3 * limit {
		if _, err := conn.Read(make([]byte, 512)); err != nil {
			t.Fatalf("answer %d of %d: %v", i+1, 3*limit, err)
		}
	}
	if most := b.most.Load(); most > limit {
		t.Fatalf("the responder held %d queries at once, want at most %d", most, limit)
	}
}

// passAll is a fast path that answers nothing: every query reaches the
// ordinary path through the fast path's queue.
type passAll struct{}

func (passAll) Version() uint64 { return 1 }

func (passAll) Fill(string, uint16) (fastpath.Answer, bool) { return fastpath.Answer{}, false }

// TestEveryPacketGivesItsSlotBack sends many times more packets than
// there are slots, of every kind miekg/dns ends early (too short, a
// response, another opcode, a body that does not parse, several
// questions) and ones the responder answers: if one kind kept its slot,
// the server would stop reading.
func TestEveryPacketGivesItsSlotBack(t *testing.T) {
	const limit = 2
	for _, fast := range []bool{false, true} {
		cfg := Config{Responder: records(1), UDPMaxInFlight: limit}
		if fast {
			cfg.FastPath = passAll{}
		}
		s := startServerWith(t, cfg)
		valid, _ := query("big.test.", dns.TypeA, 0).Pack()
		kinds := map[string][]byte{
			"too short":         {0, 1, 2},
			"a response":        header(1, 1<<15, 1, 0, 0, 0),
			"an UPDATE":         header(1, 5<<11, 1, 0, 0, 0),
			"a cut body":        valid[:len(valid)-3],
			"several questions": header(1, 0, 2, 0, 0, 0),
			"a query":           valid,
		}
		for kind, pkt := range kinds {
			conn, err := net.Dial("udp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			for range 10 * limit {
				conn.Write(pkt)
			}
			conn.Close()
			if got := rawUDP(t, s.Addr(), valid, probeID); got[probeID] != dns.RcodeSuccess {
				t.Fatalf("fast path %v: after %d packets %s, a query got %v", fast, 10*limit, kind, got)
			}
		}
	}
}
