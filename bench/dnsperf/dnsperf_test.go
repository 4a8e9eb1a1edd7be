package dnsperf

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/bench/fixed"
)

const sample = `DNS Performance Testing Tool
Version 2.10.0

[Status] Command line: dnsperf -s 127.0.0.1 -p 15454 -d q.txt -l 2 -v
> NOERROR a.b.c A 0.000200
> NXDOMAIN x.y A 0.000100
> NOERROR a.b.c A 0.000400
> NOERROR x.y AAAA 0.000300
[Timeout] Query timed out: msg id 7
[Status] Testing complete (time limit)

Statistics:

  Queries sent:         5
  Queries completed:    4 (80.00%)
  Queries lost:         1 (20.00%)

  Response codes:       NOERROR 3 (75.00%), NXDOMAIN 1 (25.00%)
  Average packet size:  request 22, response 42
  Run time (s):         2.000336
  Queries per second:   1.999664

  Average Latency (s):  0.000250 (min 0.000100, max 0.000400)
  Latency StdDev (s):   0.000100
`

func TestParseReadsTheStatisticsAndTheResponses(t *testing.T) {
	res, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 5 || res.Completed != 4 || res.Lost != 1 || res.QPS != 1.999664 {
		t.Errorf("counts %+v", res)
	}
	if res.Avg != 250*time.Microsecond || res.RunTime.Round(time.Millisecond) != 2*time.Second {
		t.Errorf("avg %s, run time %s", res.Avg, res.RunTime)
	}
	if res.P50 != 200*time.Microsecond || res.P99 != 400*time.Microsecond {
		t.Errorf("p50 %s, p99 %s", res.P50, res.P99)
	}
	if res.Rcodes["NOERROR A"] != 2 || res.Rcodes["NXDOMAIN A"] != 1 || res.Rcodes["NOERROR AAAA"] != 1 {
		t.Errorf("rcodes %v", res.Rcodes)
	}
}

func TestParseFailsWithoutStatistics(t *testing.T) {
	_, err := Parse(strings.NewReader("Error: socket: Address family not supported\n"))
	if err == nil || !strings.Contains(err.Error(), "Statistics") {
		t.Fatalf("err %v", err)
	}
	bad := strings.Replace(sample, "Queries sent:         5", "Queries sent:         five", 1)
	if _, err := Parse(strings.NewReader(bad)); err == nil {
		t.Fatal("a non-number count: want an error")
	}
}

func TestPercentileUsesTheNearestRank(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond
	}
	if p := percentile(ds, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 of 1..100ms = %s", p)
	}
	if p := percentile(ds, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 of 1..100ms = %s", p)
	}
	if p := percentile(nil, 0.99); p != 0 {
		t.Errorf("p99 of nothing = %s", p)
	}
}

func TestArgsPinAndBoundTheRun(t *testing.T) {
	args, err := Options{Addr: "127.0.0.1:53", QueryFile: "q", Duration: 1500 * time.Millisecond, Verbose: true, CPU: 1}.Args()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"taskset", "-c", "1", "dnsperf", "-s", "127.0.0.1", "-p", "53", "-d", "q", "-q", "100", "-t", "5", "-l", "1.5", "-v"}
	if !slices.Equal(args, want) {
		t.Errorf("args %q", args)
	}
	args, _ = Options{Addr: "127.0.0.1:53", QueryFile: "q", MaxRuns: 2, MaxQPS: 10, CPU: -1}.Args()
	if !slices.Contains(args, "-n") || !slices.Contains(args, "-Q") || args[0] != "dnsperf" {
		t.Errorf("args %q", args)
	}
	if _, err := (Options{Addr: "127.0.0.1"}).Args(); err == nil {
		t.Error("an address without a port: want an error")
	}
	args, _ = Options{Addr: "127.0.0.1:53", QueryFile: "q", Duration: time.Second, Mode: "tcp", Clients: 10, CPU: -1}.Args()
	if i := slices.Index(args, "-m"); i < 0 || args[i+1] != "tcp" {
		t.Errorf("TCP: args %q; want -m tcp", args)
	}
	if i := slices.Index(args, "-c"); i < 0 || args[i+1] != "10" {
		t.Errorf("10 clients: args %q; want -c 10", args)
	}
	args, _ = Options{Addr: "127.0.0.1:853", QueryFile: "q", Duration: time.Second, Mode: "dot", Clients: 10, CPU: -1}.Args()
	if i := slices.Index(args, "-m"); i < 0 || args[i+1] != "dot" || args[slices.Index(args, "-p")+1] != "853" {
		t.Errorf("DNS over TLS: args %q; want -m dot -p 853", args)
	}
	if args, _ = (Options{Addr: "127.0.0.1:53", QueryFile: "q", Mode: "udp", CPU: -1}).Args(); slices.Contains(args, "-m") {
		t.Errorf("UDP: args %q; want no -m, dnsperf's default", args)
	}
	if _, err := (Options{Addr: "127.0.0.1:443", QueryFile: "q", Mode: "doh", CPU: -1}).Args(); err == nil || !strings.Contains(err.Error(), "doh") {
		t.Errorf("mode doh: %v; want an error naming it", err)
	}
	if args, _ = (Options{Addr: "127.0.0.1:53", QueryFile: "q", CPU: -1, DNSSECOK: true}).Args(); !slices.Contains(args, "-D") {
		t.Errorf("DO bit: args %q; want -D", args)
	}
}

func TestRunCountsEveryAnswerOfARealServer(t *testing.T) {
	if _, err := exec.LookPath("dnsperf"); err != nil {
		t.Skip("dnsperf is not installed (apt-get install dnsperf)")
	}
	h, _ := fixed.NewResponder(netip.MustParseAddr("10.0.0.1"), 30)
	srv, err := fixed.Start("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	queries := filepath.Join(t.TempDir(), "queries")
	os.WriteFile(queries, []byte("a.example. A\nb.example. AAAA\n"), 0o644)
	res, err := Run(t.Context(), Options{Addr: srv.Addr(), QueryFile: queries, MaxRuns: 50, Outstanding: 10, Verbose: true, CPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 100 || res.Lost != 0 || res.Rcodes["NOERROR A"] != 50 || res.P99 <= 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestRunSaysWhyDnsperfFailed(t *testing.T) {
	if _, err := exec.LookPath("dnsperf"); err != nil {
		t.Skip("dnsperf is not installed")
	}
	_, err := Run(t.Context(), Options{Addr: "127.0.0.1:53", QueryFile: "/nonexistent/queries", CPU: -1})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/queries") {
		t.Fatalf("err %v", err)
	}
}
