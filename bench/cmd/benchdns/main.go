// Command benchdns runs the DNS comparison on one machine: skydns (also
// with a signed zone, asked with the DO bit), CoreDNS's etcd plugin
// without and with cache, dnsmasq, a fixed-answer miekg/dns server, Knot
// DNS and NSD, all serving the same generated services, and a kernel-floor
// server answering every query with one fixed record. Each server is
// pinned to one CPU and dnsperf to another; rounds are interleaved. Then a
// callgrind pass counts instructions per query, and a memory pass measures
// skydns's RSS at several sizes, its apply rate and its write → answer
// latency. The tables go to stdout and to --out.
//
// bench/dns.sh installs what it needs and builds the binaries; run it, or
// `make bench-dns`, rather than this command directly.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	b, err := newBench(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "benchdns: %v\n", err)
		return 1
	}
	defer b.close()
	res := b.runParts(ctx)
	text := res.markdown(cfg, args)
	fmt.Fprint(stdout, text)
	if err := writeResults(cfg.out, text); err != nil {
		fmt.Fprintf(stderr, "benchdns: %v\n", err)
		return 1
	}
	if ctx.Err() != nil {
		return 1
	}
	return 0
}
