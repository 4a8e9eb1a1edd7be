package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// The hostile traffic test runs a built skydns (SKYDNS_HOSTILE_BINARY,
// set by make test-hostile) against a flood of mutated and random
// datagrams, lying and oversized TCP frames, thousands of idle TCP
// connections and clients that never read their answers, while a
// well-behaved client asks its questions. The flood is paced at half the
// capacity measured first.
const (
	floodDatagrams  = 1_000_000
	idleConnections = 10_000
	tcpMaxConns     = 1000
	slowReaders     = 10
	capacityBlast   = 200_000
	// floodBudget bounds the flood's duration: on a machine that gives the
	// server too little CPU, it is paced faster than half the capacity.
	floodBudget = 150 * time.Second
	// goodShare is the least share of the well-behaved client's queries
	// answered within 1 s; the target is all of them, which a server
	// starved of CPU by other processes can miss by a few.
	goodShare = 0.99
	// The TCP side's pace: connections carrying frames, and idle ones.
	tcpSessionsPerSecond = 200
	idlePerSecond        = 2000
	// maxPeakRSS bounds the server's peak resident memory (VmHWM).
	maxPeakRSS = 256 << 20
)

// hostileTarget is the skydns under test.
type hostileTarget struct {
	dns, http string
	proc      proc
	errors    *errorLines
}

func TestHostileTraffic(t *testing.T) {
	bin := os.Getenv("SKYDNS_HOSTILE_BINARY")
	if bin == "" {
		t.Skip("SKYDNS_HOSTILE_BINARY is not set: make test-hostile runs this test against bin/skydns")
	}
	raiseFileLimit(t, idleConnections+slowReaders+2000)
	srv := startHostileTarget(t, bin)
	baseFDs := srv.proc.fds(t)
	pool := floodPool(100_000)
	capacity := measureCapacity(t, srv, pool, capacityBlast)
	rate := capacity / 2
	t.Logf("capacity: the server takes in %d flood datagrams/s (%d sent as fast as possible); half of it: %d/s", capacity, capacityBlast, rate)
	if least := floodDatagrams / int(floodBudget.Seconds()); rate < least {
		rate = least
		t.Logf("this machine gives the server too little CPU for half of it to send %d datagrams within %v: the flood is paced at %d/s", floodDatagrams, floodBudget, rate)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	peaks := srv.proc.watch(ctx, t)
	start, cpuBefore := time.Now(), srv.proc.cpu(t)
	var (
		wg    sync.WaitGroup
		flood floodResult
		good  goodResult
		tcp   tcpResult
		idle  idleResult
	)
	floodCtx, floodDone := context.WithCancel(ctx)
	wg.Go(func() { flood = sendFlood(t, srv.dns, pool, floodDatagrams, rate); floodDone() })
	wg.Go(func() { good = askWhileFlooded(floodCtx, srv.dns) })
	wg.Go(func() { tcp = sendTCPFrames(floodCtx, srv.dns, tcpSessionsPerSecond) })
	wg.Go(func() { idle = holdIdleConnections(t, srv.dns, idleConnections, idlePerSecond) })
	wg.Go(func() { stopReading(t, srv.dns, slowReaders) })
	wg.Wait()

	cpu := srv.proc.cpu(t) - cpuBefore
	t.Logf("flood: %d datagrams in %v (%.0f/s), %d answered; the server used %v of CPU meanwhile (%.0f %% of one core)",
		flood.sent, flood.took.Round(time.Millisecond), float64(flood.sent)/flood.took.Seconds(), flood.answered,
		cpu, 100*cpu.Seconds()/time.Since(start).Seconds())
	t.Logf("TCP: %d frames (lying lengths, oversized, cut, garbage, real) on %d connections", tcp.frames, tcp.conns)
	t.Logf("idle TCP connections: %d opened, %d reset at once (beyond --tcp-max-connections %d), %d closed by the server after waiting, %d never closed",
		idle.opened, idle.refused, tcpMaxConns, idle.closed, idle.open)
	t.Logf("well-behaved client: %d of %d UDP queries answered within 1 s (%.3f %%), slowest %v", good.answered, good.sent,
		100*float64(good.answered)/float64(max(good.sent, 1)), good.slowest.Round(time.Millisecond))
	t.Logf("datagrams lost: %d dropped by the kernel at the server's full sockets, %d by the fast path's full queue to the ordinary path",
		udpDrops(t, srv.dns), int(scrapeSum(t, srv.http, "skydns_dns_fast_path_dropped_total")))
	waitFDs(t, srv.proc, baseFDs+5, "every hostile TCP connection is closed")
	final := srv.proc.memory(t)
	t.Logf("server: peak RSS (VmHWM) %.1f MiB, RSS after %.1f MiB, at most %d open files (%d before), total %v",
		mib(max(final.hwm, peaks.rss.Load())), mib(final.rss), peaks.fds.Load(), baseFDs, time.Since(start).Round(time.Second))

	checkSurvived(t, srv)
	if flood.sent < floodDatagrams {
		t.Errorf("sent %d datagrams, want %d", flood.sent, floodDatagrams)
	}
	if good.sent == 0 || float64(good.answered) < goodShare*float64(good.sent) {
		t.Errorf("the well-behaved client had %d of %d queries answered within 1 s; want at least %.0f %%. First failures: %s",
			good.answered, good.sent, 100*goodShare, strings.Join(good.failures, "; "))
	} else if good.answered != good.sent {
		t.Logf("missed within 1 s: %s", strings.Join(good.failures, "; "))
	}
	if idle.open != 0 || idle.refused == 0 || idle.opened != idleConnections {
		t.Errorf("idle connections: %d opened, %d still open, %d reset; want %d opened, all closed, some reset at the limit",
			idle.opened, idle.open, idle.refused, idleConnections)
	}
	// Besides its TCP connections the server holds the forwarder's
	// sockets and, for a moment, each connection it resets.
	if limit := int64(baseFDs + tcpMaxConns + 100); peaks.fds.Load() > limit {
		t.Errorf("the server had %d open files; --tcp-max-connections %d allows %d", peaks.fds.Load(), tcpMaxConns, limit)
	}
	if peak := max(final.hwm, peaks.rss.Load()); peak > maxPeakRSS {
		t.Errorf("peak RSS %.1f MiB, above the bound of %.0f MiB", mib(peak), mib(maxPeakRSS))
	}
}

// startHostileTarget starts bin reading an etcd in this process, with a
// few records and an upstream on 127.0.0.1 for names outside the zone.
func startHostileTarget(t *testing.T, bin string) *hostileTarget {
	etcd := etcdtest.Start(t)
	put := func(name, label, value string) {
		etcd.Put(t, contract.Key(contract.DefaultPrefix, name)+"/"+label, value)
	}
	put("web.default.svc.cluster.local.", "a", `{"host":"10.96.0.1"}`)
	put("web.default.svc.cluster.local.", "b", `{"host":"fd00::1"}`)
	put("_http._tcp.web.default.svc.cluster.local.", "p", `{"host":"web.default.svc.cluster.local.","port":80}`)
	put("1.0.96.10.in-addr.arpa.", "ptr", `{"host":"web.default.svc.cluster.local."}`)
	for i := range 40 {
		put("big.default.svc.cluster.local.", fmt.Sprintf("b%d", i), fmt.Sprintf(`{"host":"10.4.0.%d"}`, i))
	}
	upstream := startUpstream(t)
	cmd, logs, dnsAddr, httpAddr := startBinary(t, bin, nil, "--etcd-endpoints", etcd.ClientURL(), "--upstream", upstream,
		"--tcp-max-connections", fmt.Sprint(tcpMaxConns))
	return &hostileTarget{dns: dnsAddr, http: httpAddr, proc: proc{pid: cmd.Process.Pid}, errors: collectErrors(logs)}
}

// startUpstream is a DNS server on 127.0.0.1 answering every question with
// an A record.
func startUpstream(t *testing.T) string {
	return dnstest.StartServer(t, dnstest.Reply(func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		hdr := dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}
		resp.Answer = []dns.RR{&dns.A{Hdr: hdr, A: net.IPv4(192, 0, 2, 1)}}
		return resp
	}))
}

// errorLines keeps the server's log lines at level ERROR, reading them
// all so that the server never waits on its stderr.
type errorLines struct {
	mu    sync.Mutex
	lines []string
}

func collectErrors(logs <-chan string) *errorLines {
	e := &errorLines{}
	go func() {
		for line := range logs {
			if strings.Contains(line, "level=ERROR") {
				e.mu.Lock()
				e.lines = append(e.lines, line)
				e.mu.Unlock()
			}
		}
	}()
	return e
}

func (e *errorLines) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.lines, "\n")
}

// checkSurvived checks the server is up, answers over both transports,
// counted no panic and logged no error.
func checkSurvived(t *testing.T, srv *hostileTarget) {
	t.Helper()
	if err := syscall.Kill(srv.proc.pid, 0); err != nil {
		t.Fatalf("the server process is gone: %v", err)
	}
	for _, proto := range []string{"udp", "tcp"} {
		resp, err := dnstest.Send(proto, srv.dns, new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeA))
		if err != nil || resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
			t.Errorf("after the hostile traffic, %s: %v %v", proto, resp, err)
		}
	}
	if panics := scrapeSum(t, srv.http, "skydns_panics_total"); panics != 0 {
		t.Errorf("skydns_panics_total = %v, want 0", panics)
	}
	if logged := srv.errors.String(); logged != "" {
		t.Errorf("the server logged errors:\n%s", logged)
	}
}

// raiseFileLimit raises this process's open files limit to at least n,
// within the hard limit.
func raiseFileLimit(t *testing.T, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Fatalf("the hard open files limit is %d; this test needs %d (ulimit -Hn)", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("raising the open files limit to %d: %v", n, err)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
