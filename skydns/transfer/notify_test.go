package transfer_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// secondary is a UDP server on 127.0.0.1 that records the NOTIFY it gets,
// answering NOERROR for the zones it carries and NOTAUTH for the others.
type secondary struct {
	addr  string
	zones []string
	mu    sync.Mutex
	got   []string // zones notified, in order
}

func startSecondary(t *testing.T, zones ...string) *secondary {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &secondary{addr: pc.LocalAddr().String(), zones: zones}
	dnstest.Serve(t, &dns.Server{PacketConn: pc, Handler: s,
		MsgAcceptFunc: func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept }})
	return s
}

func (s *secondary) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	resp := new(dns.Msg).SetReply(req)
	if req.Opcode != dns.OpcodeNotify || !slices.Contains(s.zones, req.Question[0].Name) {
		resp.Rcode = dns.RcodeNotAuth
	}
	if req.Opcode == dns.OpcodeNotify {
		s.mu.Lock()
		s.got = append(s.got, req.Question[0].Name)
		s.mu.Unlock()
	}
	w.WriteMsg(resp)
}

func (s *secondary) notified() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func TestNotifyGetsTheSecondarysAnswer(t *testing.T) {
	s := startSecondary(t, "cluster.local.")
	rcode, err := transfer.Notify(t.Context(), s.addr, "cluster.local.")
	if err != nil || rcode != dns.RcodeSuccess {
		t.Fatalf("Notify: %s, %v; want NOERROR", dns.RcodeToString[rcode], err)
	}
	if rcode, err := transfer.Notify(t.Context(), s.addr, "in-addr.arpa."); err != nil || rcode != dns.RcodeNotAuth {
		t.Fatalf("Notify of a zone the secondary lacks: %s, %v; want NOTAUTH", dns.RcodeToString[rcode], err)
	}
}

func TestNotifyToNoOneFailsWithinItsTries(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0") // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := transfer.Notify(ctx, pc.LocalAddr().String(), "cluster.local."); err == nil {
		t.Fatal("Notify to a silent target: no error")
	}
}

func TestChangesWithinTheIntervalMakeOneMoreRound(t *testing.T) {
	s := startSecondary(t, "cluster.local.")
	n := transfer.NewNotifier([]string{s.addr}, []string{"cluster.local.", "in-addr.arpa."}, 300*time.Millisecond,
		slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	n.Changed()
	waitNotified(t, s, 2)
	for range 50 { // within the interval: one more round, not fifty
		n.Changed()
	}
	waitNotified(t, s, 4)
	time.Sleep(600 * time.Millisecond) // two intervals with no change: no round
	if got := s.notified(); len(got) != 4 {
		t.Fatalf("notified %v, want two rounds of two zones", got)
	}
}

// waitNotified polls until s has received n NOTIFY messages.
func waitNotified(t *testing.T, s *secondary, n int) {
	t.Helper()
	polltest.Within(t, 10*time.Second, fmt.Sprintf("%d NOTIFY", n), func() error {
		if got := s.notified(); len(got) < n {
			return fmt.Errorf("notified %v", got)
		}
		return nil
	})
}
