// Command fanout measures etcd's watch fan-out to W skydns readers: a
// 3-member etcd cluster of real etcd processes on 127.0.0.1, optionally P
// `etcd grpc-proxy` processes in front, the records of a simulated
// cluster, kube2sky-shaped churn, and W readers running etcdstore's
// ListWatcher in this process. For each W it runs without and with
// proxies, and writes a markdown report (see docs/fan-out.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the bench's flags.
type options struct {
	etcd           string
	dir            string
	out            string
	readers        []int
	proxies        int
	direct         bool
	perClient      int
	startRate      int
	services       int
	endpoints      int
	rate           int
	churn, slow    time.Duration
	catchUp        time.Duration
	jitter         time.Duration
	listSlots      int
	progressNotify time.Duration
	readerLog      bool
	tiers          []string
	watchBatch     time.Duration
	profileDir     string
	self           string // this binary, run as relay processes
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == relayServeArg {
		if err := serveRelay(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "fanout relay:", err)
			os.Exit(1)
		}
		return
	}
	if err := run1(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

func run1(args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	if err := raiseFileLimit(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	readerLog := slog.New(slog.DiscardHandler)
	if o.readerLog {
		readerLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var results []result
	started := time.Now()
	for _, w := range o.readers {
		for _, st := range o.setups(w) {
			p := st.proxies
			r := &run{opts: o, setup: st, log: log, readerLog: readerLog}
			if err := r.do(ctx); err != nil {
				return fmt.Errorf("W=%d P=%d: %w", w, p, err)
			}
			results = append(results, r.result)
			if err := writeReport(o, results, time.Since(started)); err != nil {
				return err
			}
			log.Info("done", "readers", w, "proxies", p, "tier", st.tier, "elapsed", time.Since(started).Round(time.Second))
		}
	}
	return nil
}

func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	o := options{}
	readers := fs.String("readers", "100,1000,5000", "comma-separated reader counts W")
	fs.StringVar(&o.etcd, "etcd", "bin/etcd", "the etcd binary (members and grpc-proxy)")
	fs.StringVar(&o.dir, "dir", "", "work directory for data and logs (default: a new temporary one)")
	fs.StringVar(&o.out, "out", "bench/results/fan-out.md", "the markdown report")
	fs.IntVar(&o.proxies, "proxies", 2, "grpc-proxies in the proxied runs (0: no proxied runs)")
	fs.BoolVar(&o.direct, "direct", true, "run each W without proxies too (false: only the proxied run)")
	fs.IntVar(&o.perClient, "readers-per-client", 1, "readers sharing one etcd client (one gRPC connection)")
	fs.IntVar(&o.startRate, "start-rate", 50, "readers started per second")
	fs.IntVar(&o.services, "services", 10000, "Services in the simulated cluster")
	fs.IntVar(&o.endpoints, "endpoints", 5, "endpoints per Service")
	fs.IntVar(&o.rate, "rate", 100, "Service changes (Txns) per second")
	fs.DurationVar(&o.churn, "churn", 20*time.Second, "length of the measured churn")
	fs.DurationVar(&o.slow, "slow", 30*time.Second, "how long the slow reader stops applying")
	fs.DurationVar(&o.catchUp, "catch-up", 15*time.Minute, "how long readers get to become current before they count as given up")
	fs.DurationVar(&o.jitter, "relist-jitter", 0, "ListWatcher.RelistJitter (0: its default)")
	fs.IntVar(&o.listSlots, "list-slots", 64, "readers of this process that list at once (0: no bound)")
	fs.DurationVar(&o.progressNotify, "progress-notify", time.Second, "etcd's --watch-progress-notify-interval")
	fs.BoolVar(&o.readerLog, "reader-log", false, "log what the readers' ListWatchers log (debug level) on stderr")
	tiers := fs.String("tiers", tierGRPCProxy, "comma-separated proxy tiers, each run in turn: grpc-proxy (etcd's), relay (skydns relay --watch-batch 0), relay-batched (skydns relay --watch-batch)")
	fs.DurationVar(&o.watchBatch, "watch-batch", 250*time.Millisecond, "the relay-batched tier's --watch-batch")
	fs.StringVar(&o.profileDir, "profile-dir", "", "write each relay process's CPU profile over the churn here")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.readers, err = parseCounts(*readers); err != nil {
		return o, fmt.Errorf("--readers: %w", err)
	}
	for _, t := range strings.Split(*tiers, ",") {
		if err := checkTier(strings.TrimSpace(t)); err != nil {
			return o, fmt.Errorf("--tiers: %w", err)
		}
		o.tiers = append(o.tiers, strings.TrimSpace(t))
	}
	if o.self, err = os.Executable(); err != nil {
		return o, err
	}
	if err := o.validate(); err != nil {
		return o, err
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "fanout-"); err != nil {
			return o, err
		}
	}
	return o, nil
}

func (o options) validate() error {
	switch {
	case o.proxies < 0:
		return fmt.Errorf("--proxies %d: want 0 or more", o.proxies)
	case o.proxies == 0 && !o.direct:
		return errors.New("--direct=false with --proxies 0: no run left")
	case o.listSlots < 0:
		return fmt.Errorf("--list-slots %d: want 0 or more", o.listSlots)
	case o.perClient < 1:
		return fmt.Errorf("--readers-per-client %d: want 1 or more", o.perClient)
	case o.startRate < 1 || o.startRate > 10000:
		return fmt.Errorf("--start-rate %d: want 1 to 10000", o.startRate)
	case o.services < headlessN:
		return fmt.Errorf("--services %d: want at least %d", o.services, headlessN)
	case o.endpoints < 1:
		return fmt.Errorf("--endpoints %d: want 1 or more", o.endpoints)
	case o.rate < 1 || o.rate > 1000:
		return fmt.Errorf("--rate %d: want 1 to 1000", o.rate)
	case o.churn < time.Second || o.slow < time.Second:
		return errors.New("--churn and --slow: want at least 1s")
	case o.watchBatch <= 0 || o.watchBatch > time.Second:
		return fmt.Errorf("--watch-batch %s: want more than 0, at most 1s", o.watchBatch)
	}
	if _, err := os.Stat(o.etcd); err != nil {
		return fmt.Errorf("--etcd: %w (make tools builds bin/etcd)", err)
	}
	return nil
}

// parseCounts reads "100,1000" as positive integers.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// setups are the runs of W readers: each tier with the proxies, then
// without proxies (unless --direct=false).
func (o options) setups(w int) []setup {
	var out []setup
	for _, p := range o.proxyCounts() {
		if p == 0 {
			out = append(out, setup{readers: w, perClient: o.perClient})
			continue
		}
		for _, t := range o.tiers {
			out = append(out, setup{readers: w, proxies: p, perClient: o.perClient, tier: t})
		}
	}
	return out
}

// proxyCounts are the proxy counts run for each W, in order: --proxies
// (unless 0), the setup the capacity model is about, then none (unless
// --direct=false).
func (o options) proxyCounts() []int {
	var counts []int
	if o.proxies > 0 {
		counts = append(counts, o.proxies)
	}
	if o.direct {
		counts = append(counts, 0)
	}
	return counts
}

// raiseFileLimit lifts the soft limit on open files to the hard one: every
// reader holds a connection, and the etcd processes inherit the limit.
func raiseFileLimit() error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	l.Cur = l.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}
