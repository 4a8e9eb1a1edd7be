package dnsperf

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Options say how to run dnsperf.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// QueryFile holds "name type" lines.
	QueryFile string
	// Duration stops the run after this long; zero means MaxRuns.
	Duration time.Duration
	// MaxRuns passes over the query file this many times (with Duration
	// zero; default 1).
	MaxRuns int
	// Outstanding is the most queries in flight (dnsperf -q; default 100).
	Outstanding int
	// Timeout counts a query lost after this long (default 5s).
	Timeout time.Duration
	// MaxQPS limits the query rate; zero is as fast as possible.
	MaxQPS int
	// Verbose prints a line per response, for percentiles and Rcodes.
	Verbose bool
	// CPU pins dnsperf to this CPU with taskset; -1 leaves it free.
	CPU int
	// Mode is the transport (dnsperf -m): "udp" (or ""), "tcp", or
	// "dot", DNS over TLS without checking the server's certificate;
	// over TCP and TLS each client keeps one connection.
	Mode string
	// Clients is how many clients dnsperf simulates, each with its own
	// socket (dnsperf -c; default 1).
	Clients int
	// DNSSECOK sets the DO bit in every query (dnsperf -D, which adds an
	// OPT record).
	DNSSECOK bool
}

// Args returns the command line, starting with taskset when pinned.
func (o Options) Args() ([]string, error) {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("dnsperf server address: %w", err)
	}
	args := []string{"dnsperf", "-s", host, "-p", port, "-d", o.QueryFile,
		"-q", strconv.Itoa(valueOr(o.Outstanding, 100)), "-t", formatSeconds(o.Timeout, 5*time.Second)}
	if o.Duration > 0 {
		args = append(args, "-l", formatSeconds(o.Duration, 0))
	} else {
		args = append(args, "-n", strconv.Itoa(valueOr(o.MaxRuns, 1)))
	}
	switch o.Mode {
	case "", "udp":
	case "tcp", "dot":
		args = append(args, "-m", o.Mode)
	default:
		return nil, fmt.Errorf("dnsperf mode %q: want udp, tcp or dot", o.Mode)
	}
	if o.Clients > 1 {
		args = append(args, "-c", strconv.Itoa(o.Clients))
	}
	if o.DNSSECOK {
		args = append(args, "-D")
	}
	if o.MaxQPS > 0 {
		args = append(args, "-Q", strconv.Itoa(o.MaxQPS))
	}
	if o.Verbose {
		args = append(args, "-v")
	}
	if o.CPU >= 0 {
		args = append([]string{"taskset", "-c", strconv.Itoa(o.CPU)}, args...)
	}
	return args, nil
}

func valueOr(v, fallback int) int {
	if v <= 0 {
		return fallback
	}
	return v
}

func formatSeconds(d, fallback time.Duration) string {
	if d <= 0 {
		d = fallback
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Run runs dnsperf and parses its report as it streams. A failed run's
// error carries the end of dnsperf's output.
func Run(ctx context.Context, o Options) (Result, error) {
	args, err := o.Args()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting dnsperf: %w", err)
	}
	tail := &tailWriter{max: 2000}
	res, parseErr := Parse(io.TeeReader(stdout, tail))
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil || parseErr != nil {
		return res, fmt.Errorf("dnsperf %s: %v %v\n%s%s", strings.Join(args, " "), err, parseErr, tail, stderr.String())
	}
	return res, nil
}

// tailWriter keeps the last max bytes written to it, skipping nothing but
// the oldest bytes.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.buf) }
