// Command fixeddns is the benchmark's practical limit: skydns's DNS server
// (skydns/dnsserver) answering every query, on UDP and TCP, with one fixed
// A record.
//
//	fixeddns --addr 127.0.0.1:1054 --answer 10.0.0.1
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubesky/kubesky/bench/fixed"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("fixeddns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:1054", "host:port to serve on, UDP and TCP")
	answer := fs.String("answer", "10.0.0.1", "the IPv4 address of every answer")
	ttl := fs.Uint("ttl", 30, "TTL of the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ip, err := netip.ParseAddr(*answer)
	if err != nil {
		fmt.Fprintf(stderr, "fixeddns: --answer: %v\n", err)
		return 2
	}
	a, err := fixed.NewResponder(ip, uint32(*ttl))
	if err != nil {
		fmt.Fprintf(stderr, "fixeddns: --answer: %v\n", err)
		return 2
	}
	return serve(*addr, a, stderr)
}

func serve(addr string, a *fixed.Responder, stderr io.Writer) int {
	s, err := fixed.Start(addr, a)
	if err != nil {
		fmt.Fprintf(stderr, "fixeddns: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "fixeddns serving on %s\n", s.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintf(stderr, "fixeddns: %v\n", err)
		return 1
	}
	return 0
}
