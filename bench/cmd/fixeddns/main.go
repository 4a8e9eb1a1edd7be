// Command fixeddns is the benchmark's practical limit: a miekg/dns server
// answering every query, on UDP and TCP, with one fixed A record.
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
	h, err := fixed.NewHandler(ip, uint32(*ttl))
	if err != nil {
		fmt.Fprintf(stderr, "fixeddns: --answer: %v\n", err)
		return 2
	}
	return serve(*addr, h, stderr)
}

func serve(addr string, h *fixed.Handler, stderr io.Writer) int {
	s, err := fixed.Start(addr, h)
	if err != nil {
		fmt.Fprintf(stderr, "fixeddns: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "fixeddns serving on %s\n", s.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	status := 0
	select {
	case <-ctx.Done():
	case err := <-s.Err():
		fmt.Fprintf(stderr, "fixeddns: %v\n", err)
		status = 1
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Shutdown(shutdownCtx)
	return status
}
