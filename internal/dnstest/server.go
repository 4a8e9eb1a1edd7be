package dnstest

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Serve runs s on its PacketConn or Listener until tb ends, and returns
// once s serves. The function it returns shuts s down sooner; calling it
// again does nothing.
func Serve(tb testing.TB, s *dns.Server) (stop func()) {
	tb.Helper()
	started := make(chan struct{})
	s.NotifyStartedFunc = func() { close(started) }
	served := make(chan error, 1)
	go func() { served <- s.ActivateAndServe() }()
	select {
	case <-started:
	case err := <-served:
		tb.Fatalf("DNS server did not start: %v", err)
	case <-time.After(Timeout):
		tb.Fatalf("DNS server did not start within %s", Timeout)
	}
	stop = sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		if err := s.ShutdownContext(ctx); err != nil {
			tb.Errorf("DNS server shutdown: %v", err)
		}
		<-served
	})
	tb.Cleanup(stop)
	return stop
}

// StartServer serves h over UDP and TCP on one free 127.0.0.1 port until
// tb ends, and returns the address.
func StartServer(tb testing.TB, h dns.Handler) string {
	tb.Helper()
	pc, l := ListenPair(tb)
	Serve(tb, &dns.Server{PacketConn: pc, Handler: h})
	Serve(tb, &dns.Server{Listener: l, Handler: h})
	return pc.LocalAddr().String()
}

// ListenPair opens a UDP socket and a TCP listener on the same free
// 127.0.0.1 port.
func ListenPair(tb testing.TB) (net.PacketConn, net.Listener) {
	tb.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l
		}
		pc.Close()
	}
	tb.Fatal("no port free for both UDP and TCP")
	return nil, nil
}

// Reply is a handler writing answer's reply to each query, or nothing
// when answer returns nil.
func Reply(answer func(req *dns.Msg) *dns.Msg) dns.Handler {
	return dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		if resp := answer(req); resp != nil {
			_ = w.WriteMsg(resp)
		}
	})
}
