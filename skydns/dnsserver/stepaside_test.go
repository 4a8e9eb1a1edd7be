package dnsserver

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/fastpath"
)

// fakeSockets records what stepAside did and reports a queue that
// empties after busyChecks checks.
type fakeSockets struct {
	calls      []string
	connectErr error
	busyChecks int
}

func (f *fakeSockets) connect() error    { f.calls = append(f.calls, "connect"); return f.connectErr }
func (f *fakeSockets) disconnect() error { f.calls = append(f.calls, "disconnect"); return nil }
func (f *fakeSockets) queued() (bool, error) {
	f.busyChecks--
	return f.busyChecks >= 0, nil
}

func TestStepAsideDecides(t *testing.T) {
	refused := errors.New("connection refused")
	tests := []struct {
		name       string
		connectErr error
		probeErr   error
		handed     bool
		wantErr    bool
		calls      []string
	}{
		{name: "another server answers: drain and hand over", handed: true, calls: []string{"connect"}},
		{name: "nobody else answers: disconnect and serve on", probeErr: refused, calls: []string{"connect", "disconnect"}},
		{name: "the sockets cannot be connected: serve on", connectErr: errors.New("EPERM"), wantErr: true, calls: []string{"connect", "disconnect"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			socks := &fakeSockets{connectErr: tc.connectErr}
			probed := false
			probe := func(context.Context) error { probed = true; return tc.probeErr }
			handed, err := stepAside(context.Background(), socks, probe, time.Millisecond)
			if handed != tc.handed || (err != nil) != tc.wantErr || !slices.Equal(socks.calls, tc.calls) {
				t.Fatalf("handed %v, err %v, calls %v; want %v, error %v, %v", handed, err, socks.calls, tc.handed, tc.wantErr, tc.calls)
			}
			if probed != (tc.connectErr == nil) {
				t.Fatalf("probed %v; the probe must follow a successful connect only", probed)
			}
		})
	}
}

func TestDrainWaitsUntilTheSocketsStayEmpty(t *testing.T) {
	socks := &fakeSockets{busyChecks: 5}
	quiet := 40 * time.Millisecond
	if err := drain(context.Background(), socks, quiet); err != nil {
		t.Fatal(err)
	}
	if socks.busyChecks > -3 { // 5 busy checks, then at least a few quiet ones spanning quiet
		t.Fatalf("drain returned after %d empty checks; want it to wait out %v of empty sockets", -socks.busyChecks, quiet)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := drain(ctx, &fakeSockets{busyChecks: 1 << 30}, quiet); !errors.Is(err, context.Canceled) {
		t.Fatalf("drain of sockets that never empty, ctx canceled: %v", err)
	}
}

// TestAServerStepsAsideForAnotherOnItsPort runs two servers sharing one
// 127.0.0.1 port: the first steps aside only while the second serves.
func TestAServerStepsAsideForAnotherOnItsPort(t *testing.T) {
	first := startShared(t, freeUDPAddr(t), "first")
	alone, err := first.StepAside(t.Context())
	if err != nil || alone {
		t.Fatalf("alone on its port: handed %v, err %v; want it to serve on", alone, err)
	}
	if who := askWho(t, first.Addr()); who != "first" { // disconnected again: still answers
		t.Fatalf("answered by %q after stepping aside alone; want first", who)
	}
	startShared(t, first.Addr(), "second")
	handed, err := first.StepAside(t.Context())
	if err != nil || !handed {
		t.Fatalf("with another server: handed %v, err %v; want handed over", handed, err)
	}
	for range 40 { // from 40 source ports: every new query reaches the other server
		if who := askWho(t, first.Addr()); who != "second" {
			t.Fatalf("answered by %q after stepping aside; want second", who)
		}
	}
}

// freeUDPAddr is a 127.0.0.1 address whose UDP and TCP ports were free a
// moment ago: StepAside needs a named port.
func freeUDPAddr(t *testing.T) string {
	t.Helper()
	for range 10 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := pc.LocalAddr().String()
		pc.Close()
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("no free port on 127.0.0.1")
	return ""
}

func TestStepAsideWantsANamedPort(t *testing.T) {
	s := startShared(t, "127.0.0.1:0", "chosen")
	if handed, err := s.StepAside(t.Context()); handed || err == nil {
		t.Fatalf("handed %v, err %v; want an error: a disconnect would release a chosen port", handed, err)
	}
	if who := askWho(t, s.Addr()); who != "chosen" {
		t.Fatalf("answered by %q; want the server itself, untouched", who)
	}
}

// startShared starts a server on addr sharing the port, answering every
// question with a TXT record naming it.
func startShared(t *testing.T, addr, name string) *Server {
	t.Helper()
	named := RespondFunc(func(_ context.Context, q Query) *dns.Msg {
		resp := new(dns.Msg).SetReply(q.Msg)
		resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: q.Msg.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{name}}}
		return resp
	})
	s, err := Start(Config{Addr: addr, Responder: named, ReusePort: true, UDPSockets: 1})
	if err != nil {
		t.Fatalf("Start on %s: %v", addr, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// askWho asks addr over UDP which server answers.
func askWho(t *testing.T, addr string) string {
	t.Helper()
	c := &dns.Client{Timeout: 2 * time.Second}
	resp, _, err := c.Exchange(query("who.example.", dns.TypeTXT, 0), addr)
	if err != nil {
		t.Fatalf("asking %s: %v", addr, err)
	}
	if len(resp.Answer) != 1 {
		return resp.String()
	}
	return resp.Answer[0].(*dns.TXT).Txt[0]
}

// TestSteppingAsideAnswersTheQueriesAlreadyQueued holds queries in the
// first server (its one handler slot busy: they wait in its socket, or in
// the fast path's queue), steps aside for a second server, and checks
// that StepAside waits until they are read, and that the first server
// answers them.
func TestSteppingAsideAnswersTheQueriesAlreadyQueued(t *testing.T) {
	for _, tc := range []struct {
		name string
		fast fastpath.Source
	}{{"in the socket", nil}, {"in the fast path's queue", passAll{}}} {
		t.Run(tc.name, func(t *testing.T) { stepAsideWithQueued(t, tc.fast) })
	}
}

func stepAsideWithQueued(t *testing.T, fast fastpath.Source) {
	release := make(chan struct{})
	held := RespondFunc(func(_ context.Context, q Query) *dns.Msg {
		<-release
		resp := new(dns.Msg).SetReply(q.Msg)
		resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: q.Msg.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{"first"}}}
		return resp
	})
	first, err := Start(Config{Addr: freeUDPAddr(t), Responder: held, FastPath: fast, ReusePort: true, UDPSockets: 1, UDPMaxInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Shutdown(context.Background())
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before Shutdown, which waits for the held handler
	const queued = 5
	answers := make(chan string, queued)
	for range queued {
		go func() { answers <- askWhoOrErr(first.Addr()) }()
	}
	waitQueued(t, first.sockets())
	startShared(t, first.Addr(), "second")
	stepped := make(chan bool, 1)
	go func() { handed, _ := first.StepAside(context.Background()); stepped <- handed }()
	select {
	case <-stepped:
		t.Fatal("StepAside returned while queries were still queued")
	case <-time.After(5 * DrainQuiet): // a bounded wait for something that must not happen
	}
	free()
	if !<-stepped {
		t.Fatal("StepAside did not hand over to the second server")
	}
	for range queued {
		if who := <-answers; who != "first" {
			t.Fatalf("a queued query got %q; want the first server's answer", who)
		}
	}
}

// waitQueued waits until a query waits in the sockets.
func waitQueued(t *testing.T, socks sockets) {
	t.Helper()
	polltest.Eventually(t, "a query queued in the socket", func() error {
		busy, err := socks.queued()
		if err == nil && !busy {
			err = errors.New("none queued")
		}
		return err
	})
}

// askWhoOrErr is askWho for another goroutine: the error as the answer.
func askWhoOrErr(addr string) string {
	c := &dns.Client{Timeout: 10 * time.Second}
	resp, _, err := c.Exchange(query("who.example.", dns.TypeTXT, 0), addr)
	if err != nil {
		return err.Error()
	}
	if len(resp.Answer) != 1 {
		return resp.String()
	}
	return resp.Answer[0].(*dns.TXT).Txt[0]
}
