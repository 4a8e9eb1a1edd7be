package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is the command's flags.
type config struct {
	bin       string // coredns
	skydns    string // the skydns binary
	etcd      string // the etcd binary
	benchBin  string // fixeddns
	work      string
	out       string
	services  int
	rounds    int
	duration  time.Duration
	cgQueries int // per callgrind pass of a fast server
	cgSlow    int // per callgrind pass of CoreDNS-etcd and etcd
	serverCPU int
	loadCPU   int
	parts     []string
	servers   []string
	memSizes  []int
	profile   bool

	forwarders    []string // the forward part's servers
	externalNames int      // names in the forward part's external zone
	missRate      int      // queries a second of the forward part's misses
	missLatencies []time.Duration
	outage        time.Duration // how long the upstream is away; 0: no outage
	searchQueries int           // of the Zipf mix, in the search-path workload's files
}

// defaultParts run unless --parts says otherwise; validParts may be named.
var (
	defaultParts = []string{"dns", "callgrind", "tcp", "memory"}
	validParts   = append(slices.Clone(defaultParts), "forward")
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var parts, servers, sizes, fwd, latencies string
	fs := flag.NewFlagSet("benchdns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bin, "bin", "bin", "directory holding coredns")
	fs.StringVar(&c.skydns, "skydns", "bin/skydns", "the skydns binary (unstripped, for callgrind's breakdown by source file)")
	fs.StringVar(&c.etcd, "etcd", "bin/etcd", "the etcd server binary")
	fs.StringVar(&c.benchBin, "bench-bin", "bin/bench", "directory holding fixeddns")
	fs.StringVar(&c.work, "work", "", "scratch directory for data, logs and dumps (default: a new temporary one)")
	fs.StringVar(&c.out, "out", "bench/results/latest.md", "write the Markdown results here too")
	fs.IntVar(&c.services, "services", 10000, "services in the data set")
	fs.IntVar(&c.rounds, "rounds", 3, "interleaved rounds of timed runs")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of each timed dnsperf run")
	fs.IntVar(&c.cgQueries, "callgrind-queries", 20000, "queries sent to each server under callgrind")
	fs.IntVar(&c.cgSlow, "callgrind-slow-queries", 2000, "queries sent under callgrind to CoreDNS-etcd and to etcd behind it")
	fs.IntVar(&c.serverCPU, "server-cpu", 0, "CPU the servers (and etcd) are pinned to")
	fs.IntVar(&c.loadCPU, "load-cpu", 1, "CPU dnsperf is pinned to")
	fs.StringVar(&parts, "parts", strings.Join(defaultParts, ","), "which parts to run: dns, callgrind, tcp (timed runs over TCP and their callgrind pass), memory, forward (forwarding caches, bench/results/forward.md)")
	fs.StringVar(&servers, "servers", strings.Join(serverNames(), ","), "which servers to compare")
	fs.StringVar(&sizes, "memory-sizes", "0,10000,50000", "services loaded for each skydns memory measurement (0: the base)")
	fs.StringVar(&fwd, "forwarders", strings.Join(forwarderNames(), ","), "the forward part's servers")
	fs.IntVar(&c.externalNames, "external-names", 1000000, "names in the forward part's external zone (at least 200,000)")
	fs.IntVar(&c.missRate, "miss-rate", 2000, "queries a second of the forward part's miss runs")
	fs.StringVar(&latencies, "miss-latencies", "0s,20ms", "upstream latencies of the forward part's miss runs, one run each")
	fs.IntVar(&c.searchQueries, "search-queries", 200000, "queries of the Zipf mix the search-path workload's files are made from (1 to 500,000)")
	fs.DurationVar(&c.outage, "outage", time.Minute, "how long the forward part's upstream is away (0: no outage)")
	fs.BoolVar(&c.profile, "profile", true, "take a CPU profile of skydns under load (needs --pprof in skydns)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.parts, c.servers, c.forwarders = splitList(parts), splitList(servers), splitList(fwd)
	var err error
	if c.memSizes, err = parseSizes(sizes); err != nil {
		fmt.Fprintf(stderr, "benchdns: --memory-sizes: %v\n", err)
		return c, err
	}
	if c.missLatencies, err = parseDurations(latencies); err != nil {
		fmt.Fprintf(stderr, "benchdns: --miss-latencies: %v\n", err)
		return c, err
	}
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "benchdns: %v\n", err)
		return c, err
	}
	c.bin, _ = filepath.Abs(c.bin)
	c.benchBin, _ = filepath.Abs(c.benchBin)
	c.etcd, _ = filepath.Abs(c.etcd)
	c.skydns, _ = filepath.Abs(c.skydns)
	return c, nil
}

func (c config) validate() error {
	for _, p := range c.parts {
		if !slices.Contains(validParts, p) {
			return fmt.Errorf("--parts: unknown part %q (want %s)", p, strings.Join(validParts, ", "))
		}
	}
	for _, s := range c.servers {
		if !slices.Contains(serverNames(), s) {
			return fmt.Errorf("--servers: unknown server %q (want %s)", s, strings.Join(serverNames(), ", "))
		}
	}
	for _, s := range c.forwarders {
		if !slices.Contains(forwarderNames(), s) {
			return fmt.Errorf("--forwarders: unknown server %q (want %s)", s, strings.Join(forwarderNames(), ", "))
		}
	}
	switch {
	case c.externalNames < 2*forwardWarmNames:
		return fmt.Errorf("--external-names %d: want at least %d (the warm set, then names never asked)", c.externalNames, 2*forwardWarmNames)
	case c.outage != 0 && c.outage < probeEvery+staleTTL+time.Second:
		return fmt.Errorf("--outage %s: want 0 or at least %s (the names expire, then one probe)", c.outage, probeEvery+staleTTL+time.Second)
	case c.searchQueries < 1 || c.searchQueries > zipfQueries:
		return fmt.Errorf("--search-queries %d: want 1 to %d", c.searchQueries, zipfQueries)
	case c.missRate < 1:
		return fmt.Errorf("--miss-rate %d: want at least 1", c.missRate)
	case c.services < 1:
		return fmt.Errorf("--services %d: want at least 1", c.services)
	case c.rounds < 1 || c.duration < time.Second:
		return fmt.Errorf("--rounds %d, --duration %s: want at least 1 round of 1s", c.rounds, c.duration)
	case c.cgQueries < 1 || c.cgSlow < 1:
		return fmt.Errorf("--callgrind-queries and --callgrind-slow-queries want at least 1")
	case c.serverCPU == c.loadCPU:
		return fmt.Errorf("--server-cpu and --load-cpu are both %d: the load would compete with the server", c.serverCPU)
	}
	return nil
}

func (c config) runs(part string) bool { return slices.Contains(c.parts, part) }

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseSizes(s string) ([]int, error) {
	return parseEach(s, "a number of services", strconv.Atoi)
}

func parseDurations(s string) ([]time.Duration, error) {
	return parseEach(s, "a latency", time.ParseDuration)
}

// parseEach parses every item of a comma-separated list; a negative
// value or one that does not parse is an error naming what was wanted.
func parseEach[T int | time.Duration](s, what string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range splitList(s) {
		v, err := parse(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not %s", f, what)
		}
		out = append(out, v)
	}
	return out, nil
}
