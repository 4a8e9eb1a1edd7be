package dnsserver

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// TestASlowQueryDoesNotHoldUpThoseAfterIt pipelines a query the responder
// holds until released, then ordinary ones, on one connection: those are
// answered first, and the held one once released.
func TestASlowQueryDoesNotHoldUpThoseAfterIt(t *testing.T) {
	release := make(chan struct{})
	answer := records(1)
	held := RespondFunc(func(ctx context.Context, q Query) *dns.Msg {
		if q.Msg.Id == 0 {
			<-release
		}
		return answer(ctx, q)
	})
	s := startServer(t, held)
	c := dialTCP(t, s.Addr())
	c.send(t, "big.test.", 0, 5)
	for i := range 4 {
		resp, err := c.receive()
		if err != nil {
			t.Fatalf("answer %d of the 4 after the held query: %v", i+1, err)
		}
		if resp.Id == 0 {
			t.Fatal("the held query was answered before it was released")
		}
	}
	close(release)
	if resp, err := c.receive(); err != nil || resp.Id != 0 {
		t.Fatalf("after the release: %v, %v; want the held query's answer", resp, err)
	}
}

// panicky is a fast path whose every answer panics.
type panicky struct{}

func (panicky) Version() uint64 { return 1 }

func (panicky) Fill(string, uint16) (fastpath.Answer, bool) { panic("fast path bug") }

func TestAPanicOnTheFastPathOverTCPIsAnsweredServfail(t *testing.T) {
	reports := &panicReports{}
	s := startServerWith(t, Config{Responder: records(1), FastPath: panicky{}, Panicked: reports.add})
	c := dialTCP(t, s.Addr())
	c.send(t, "big.test.", 3, 2)
	for i := range 2 {
		resp, err := c.receive()
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		if resp.Rcode != dns.RcodeServerFailure || len(resp.Question) != 1 {
			t.Fatalf("answer %d: %s with %d questions, want SERVFAIL with the question", i+1, dns.RcodeToString[resp.Rcode], len(resp.Question))
		}
	}
	reports.mu.Lock()
	defer reports.mu.Unlock()
	if len(reports.paths) != 2 || reports.paths[0] != "fast" {
		t.Fatalf("Panicked told of paths %v, want [fast fast]", reports.paths)
	}
}

func TestShutdownClosesHeldConnectionsAtOnce(t *testing.T) {
	s, err := Start(Config{Addr: "127.0.0.1:0", Responder: records(1), TCPIdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c := dialAnswered(t, s.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Shutdown took %v with a connection held open", took)
	}
	if _, err := c.receive(); !closedByServer(err) {
		t.Fatalf("read after Shutdown: %v; want the server's close", err)
	}
}

// TestAMessageDribbledByteByByteIsCutOffAtTheTimeout sends a query one
// byte every 50 ms: each byte comes well within the idle timeout, the
// whole message does not, and the connection is closed unanswered.
func TestAMessageDribbledByteByByteIsCutOffAtTheTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := startServerWith(t, Config{Responder: records(1), TCPIdleTimeout: idle})
	c := dialAnswered(t, s.Addr())
	wire, _ := query("big.test.", dns.TypeA, 0).Pack()
	frame := append([]byte{0, byte(len(wire))}, wire...)
	start := time.Now()
	for _, b := range frame {
		if _, err := c.Write([]byte{b}); err != nil {
			break // closed by the server
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.receive(); !closedByServer(err) {
		t.Fatalf("after the dribbled message: %v; want the server's close", err)
	}
	if took := time.Since(start); took > 10*idle {
		t.Errorf("closed %v after the message began; want about %v", took, idle)
	}
}
