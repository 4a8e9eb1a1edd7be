package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/polltest"
)

// The tests of node-local mode run skydns in a network namespace of their
// own, where 169.254.20.10 is put on an interface: they need root, and
// skip without it.

func TestNodeLocalSetsUpTheNodeOnceAndLeavesItAtExit(t *testing.T) {
	n := newNetns(t)
	dir := t.TempDir()
	first := runNodeLocalOnce(t, n, dir)
	if !strings.Contains(first.log, "no dummy interfaces") && !strings.Contains(n.run(t, "ip", "-d", "link", "show", "kubesky-nl0"), "dummy") {
		t.Errorf("kubesky-nl0 is neither a dummy nor a logged bridge:\n%s", first.log)
	}
	for _, want := range []string{"ip daddr 169.254.20.10 udp dport 53 notrack", "ip saddr 169.254.20.10 udp sport 53 notrack",
		"ip daddr 169.254.20.10 tcp dport 53 notrack", "ip saddr 169.254.20.10 tcp sport 53 notrack", "hook prerouting priority raw", "hook output priority raw"} {
		if !strings.Contains(first.table, want) {
			t.Errorf("the table lacks %q:\n%s", want, first.table)
		}
	}
	second := runNodeLocalOnce(t, n, dir)
	if second.addrs != first.addrs || second.table != first.table {
		t.Errorf("a second run changed the node:\nfirst:\n%s%s\nsecond:\n%s%s", first.addrs, first.table, second.addrs, second.table)
	}
	if strings.Contains(second.log, "no dummy interfaces") {
		t.Errorf("the second run made the interface again:\n%s", second.log)
	}
	if c := strings.Count(second.addrs, "169.254.20.10/32"); c != 1 {
		t.Errorf("169.254.20.10/32 is on kubesky-nl0 %d times, want once:\n%s", c, second.addrs)
	}
}

func TestNodeLocalServesAnIPv6Address(t *testing.T) {
	n := newNetns(t)
	dir := t.TempDir()
	const addr = "[fd00::10]:53"
	n.start(t, nil, nodeLocalArgs(dir, "--dns-addr", addr)...)
	waitSocketReadyz(t, filepath.Join(dir, "health.sock"), 200, "ok")
	if addrs := n.run(t, "ip", "-6", "-o", "addr", "show", "dev", "kubesky-nl0"); !strings.Contains(addrs, "fd00::10/128") {
		t.Errorf("fd00::10/128 not on kubesky-nl0:\n%s", addrs)
	}
	table := n.run(t, "nft", "list", "table", "inet", "kubesky-node-local")
	for _, want := range []string{"ip6 daddr fd00::10 udp dport 53 notrack", "ip6 saddr fd00::10 tcp sport 53 notrack"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	err := n.do(func() error {
		_, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(new(dns.Msg).SetQuestion("cluster.local.", dns.TypeSOA), addr)
		return err
	})
	if err != nil {
		t.Fatalf("asking %s: %v", addr, err)
	}
}

// nodeState is what a node-local skydns left on the node after it exited,
// and its log.
type nodeState struct{ addrs, table, log string }

// runNodeLocalOnce runs a node-local skydns until it is ready, stops it
// with SIGTERM, and returns the interface's addresses and the notrack
// table, read after it exited, and its whole log.
func runNodeLocalOnce(t *testing.T, n *testNetns, dir string) nodeState {
	t.Helper()
	cmd, logs := n.start(t, nil, nodeLocalArgs(dir, "--lameduck", "0")...)
	waitSocketReadyz(t, filepath.Join(dir, "health.sock"), 200, "ok")
	cmd.Process.Signal(syscall.SIGTERM)
	var log strings.Builder
	for line := range logs { // closed when skydns exits
		log.WriteString(line + "\n")
	}
	waitExit0(t, cmd, "SIGTERM")
	// IPv4 only: the IPv6 link-local address the kernel adds changes state with time.
	return nodeState{addrs: n.run(t, "ip", "-4", "-o", "addr", "show", "dev", "kubesky-nl0"), table: n.run(t, "nft", "list", "table", "inet", "kubesky-node-local"),
		log: log.String()}
}

func TestNodeLocalHandsTheAddressOverWithoutLosingAQuery(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"on the fast path", nil},
		{"on the ordinary path with one UDP socket", []string{"--fast-path=false", "--udp-sockets", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) { handOver(t, tc.args) })
	}
}

// handOver runs three node-local skydns with args one after the other on
// one address, sharing their sockets (--node-local-peers), under a steady
// load: SIGTERM of the first while the second serves, kill -9 of the
// second once the third serves. Not one query may be lost or slow, the
// kill's included: the third answers what the second's sockets held.
func handOver(t *testing.T, args []string) {
	n := newNetns(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	peers := t.TempDir()
	start := func(i int) (*os.Process, <-chan string) {
		shared := []string{"--lameduck", "10s", "--http-addr", "127.0.0.1:9253", "--node-local-peers", peers} // one metrics port for all (SO_REUSEPORT)
		cmd, logs := n.start(t, nil, nodeLocalArgs(dirs[i], append(shared, args...)...)...)
		waitSocketReadyz(t, filepath.Join(dirs[i], "health.sock"), 200, "ok")
		return cmd.Process, logs
	}
	p1, logs1 := start(0)
	p2, _ := start(1)
	load := startLoad(t, n, 500)
	load.waitAnswered(t, 500)

	begin := time.Now()
	p1.Signal(syscall.SIGTERM)
	waitLog(t, logs1, regexp.MustCompile(`msg="(stepped aside)`))
	if state, _ := p1.Wait(); !state.Success() {
		t.Errorf("process 1 exited with %v after SIGTERM", state)
	}
	t.Logf("process 1 stepped aside and exited %v after SIGTERM (lameduck 10s)", time.Since(begin).Round(time.Millisecond))
	load.waitAnswered(t, load.answered.Load()+500)

	p3, logs3 := start(2)
	defer p3.Kill()
	waitLog(t, logs3, regexp.MustCompile(`msg="(sharing sockets with a peer)"`))
	load.waitAnswered(t, load.answered.Load()+500)
	killed := time.Now()
	p2.Kill()
	p2.Wait()
	waitLog(t, logs3, regexp.MustCompile(`msg="(a gone peer's queued queries answered)`))
	load.waitAnswered(t, load.answered.Load()+1000)
	load.stop()
	var zero time.Time
	step, kill, after := load.between(zero, killed), load.between(killed, killed.Add(time.Second)), load.between(killed.Add(time.Second), zero)
	t.Logf("until the kill (SIGTERM of process 1 and its step-aside included): %s", step)
	t.Logf("sent in the second after kill -9 of process 2 (process 3 serving): %s", kill)
	t.Logf("sent later: %s", after)
	if step.failed() || kill.failed() || after.failed() {
		t.Errorf("queries lost or slow; first failures: %v", load.failures(3))
	}
}

// load sends one query a tick from a new socket (a new source port) to
// the node-local address from inside the namespace, and records each
// query's outcome.
type load struct {
	cancel   context.CancelFunc
	done     chan error
	answered atomic.Int64 // in time, for waitAnswered

	mu       sync.Mutex // guards outcomes
	outcomes []outcome
}

// outcome is one query's: when it was sent, and what went wrong ("" if
// nothing: answered within a second).
type outcome struct {
	sent  time.Time
	wrong string
}

// loadCounts count the outcomes of the queries sent in a period.
type loadCounts struct{ sent, answered, lost, slow int }

func (c loadCounts) failed() bool { return c.lost > 0 || c.slow > 0 }

func (c loadCounts) String() string {
	return fmt.Sprintf("%d sent, %d answered within 1s, %d lost, %d answered after >1s", c.sent, c.answered, c.lost, c.slow)
}

func startLoad(t *testing.T, n *testNetns, perSecond int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- n.do(func() error { return l.run(ctx, time.Second/time.Duration(perSecond)) }) }()
	t.Cleanup(func() { l.stop() })
	return l
}

func (l *load) run(ctx context.Context, every time.Duration) error {
	to := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(nodeLocalAddr))
	tick := time.NewTicker(every)
	defer tick.Stop()
	var queries sync.WaitGroup
	defer queries.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		conn, err := net.DialUDP("udp", nil, to) // on this thread: inside the namespace
		if err != nil {
			return err
		}
		queries.Add(1)
		go func() { defer queries.Done(); l.ask(conn) }()
	}
}

// ask sends one query on conn and waits 2 s for its answer.
func (l *load) ask(conn *net.UDPConn) {
	defer conn.Close()
	q := new(dns.Msg).SetQuestion("cluster.local.", dns.TypeSOA)
	pkt, _ := q.Pack()
	start := time.Now()
	conn.SetDeadline(start.Add(2 * time.Second))
	_, err := conn.Write(pkt)
	buf := make([]byte, 4096)
	for err == nil {
		var n int
		if n, err = conn.Read(buf); err == nil && n >= 2 && buf[0] == pkt[0] && buf[1] == pkt[1] {
			break
		}
	}
	o := outcome{sent: start}
	switch {
	case err != nil:
		o.wrong = "lost: " + err.Error()
	case time.Since(start) > time.Second:
		o.wrong = "slow"
	default:
		l.answered.Add(1)
	}
	l.mu.Lock()
	l.outcomes = append(l.outcomes, o)
	l.mu.Unlock()
}

// between counts the queries sent from from (zero: the start) until to
// (zero: the end).
func (l *load) between(from, to time.Time) loadCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c loadCounts
	for _, o := range l.outcomes {
		if o.sent.Before(from) || (!to.IsZero() && !o.sent.Before(to)) {
			continue
		}
		c.sent++
		switch {
		case o.wrong == "":
			c.answered++
		case o.wrong == "slow":
			c.slow++
		default:
			c.lost++
		}
	}
	return c
}

// failures are the first n failed queries, with their send times.
func (l *load) failures(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, o := range l.outcomes {
		if o.wrong != "" && len(out) < n {
			out = append(out, o.sent.Format("15:04:05.000")+" "+o.wrong)
		}
	}
	return out
}

// waitAnswered waits until n queries have been answered in all.
func (l *load) waitAnswered(t *testing.T, n int64) {
	t.Helper()
	polltest.Within(t, 30*time.Second, fmt.Sprintf("%d queries answered", n), func() error {
		if got := l.answered.Load(); got < n {
			return fmt.Errorf("%d answered", got)
		}
		return nil
	})
}

// stop stops sending and waits for the last answers.
func (l *load) stop() {
	if l.cancel != nil {
		l.cancel()
		<-l.done
		l.cancel = nil
	}
}

func TestNodeLocalFailuresKeepSkydnsRunningAndUnready(t *testing.T) {
	tests := []struct {
		name    string
		nobody  bool
		prepare func(t *testing.T, n *testNetns)
		args    []string
		reason  string
	}{
		{name: "without NET_ADMIN (as uid 65534)", nobody: true, reason: "NET_ADMIN"},
		{name: "with the address on another interface", prepare: func(t *testing.T, n *testNetns) {
			n.run(t, "ip", "link", "add", "other0", "type", "bridge")
			n.run(t, "ip", "addr", "add", "169.254.20.10/32", "dev", "other0")
		}, reason: "address taken: 169.254.20.10 is on interface other0"},
		{name: "with the DNS port held by a socket without SO_REUSEPORT", prepare: func(t *testing.T, n *testNetns) {
			n.run(t, "ip", "link", "add", "kubesky-nl0", "type", "bridge")
			n.run(t, "ip", "addr", "add", "169.254.20.10/32", "dev", "kubesky-nl0")
			n.run(t, "ip", "link", "set", "kubesky-nl0", "up")
			holdUDP(t, n, nodeLocalAddr)
		}, reason: "address already in use"},
		{name: "with etcd unreachable", args: []string{"--etcd-endpoints", "http://127.0.0.1:1", "--etcd-dial-timeout", "500ms", "--etcd-request-timeout", "1s"},
			reason: "etcd unreachable"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" logs why and answers /readyz 503", func(t *testing.T) {
			n := newNetns(t)
			if tc.prepare != nil {
				tc.prepare(t, n)
			}
			dir, cred := t.TempDir(), (*syscall.Credential)(nil)
			if tc.nobody {
				dir, cred = nobodyDir(t), &syscall.Credential{Uid: 65534, Gid: 65534}
			}
			cmd, logs := n.start(t, cred, nodeLocalArgs(dir, tc.args...)...)
			line := waitLog(t, logs, regexp.MustCompile(`(level=ERROR msg="node-local: not serving DNS, retrying".*`+regexp.QuoteMeta(tc.reason)+`.*)`))
			t.Logf("log: %s", line)
			waitSocketReadyz(t, filepath.Join(dir, "health.sock"), 503, tc.reason)
			stillRunning(t, cmd)
		})
	}
}

// holdUDP binds addr on UDP inside the namespace, without SO_REUSEPORT,
// until the test ends.
func holdUDP(t *testing.T, n *testNetns, addr string) {
	t.Helper()
	var pc net.PacketConn
	if err := n.do(func() (err error) { pc, err = net.ListenPacket("udp", addr); return err }); err != nil {
		t.Fatalf("holding %s: %v", addr, err)
	}
	t.Cleanup(func() { pc.Close() })
}

// nobodyDir is a temporary directory uid 65534 may write, with the test
// binary's directory opened to it too.
func nobodyDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kubesky-nl-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(skydnsBinary(t)), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestNodeLocalBindsDNSOnlyAfterTheFirstSnapshot(t *testing.T) {
	n := newNetns(t)
	dir := t.TempDir()
	const etcdAddr = "127.0.0.1:23790" // inside the namespace, where nothing else listens
	_, logs := n.start(t, nil, nodeLocalArgs(dir, "--etcd-endpoints", "http://"+etcdAddr)...)
	socket := filepath.Join(dir, "health.sock")
	waitSocketReadyz(t, socket, 503, "waiting for the first full snapshot from etcd")
	if err := askIn(n); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a query before etcd is up: %v; want connection refused (the port not bound)", err)
	}
	etcdStarted := time.Now()
	etcdDir := t.TempDir()
	n.start(t, nil, "--dns-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--embedded-etcd-addr", etcdAddr,
		"--etcd-data-dir", filepath.Join(etcdDir, "etcd"), "--upstream", "127.0.0.1:53")
	waitLog(t, logs, regexp.MustCompile(`msg="serving DNS" addr=(169\.254\.20\.10:53)`))
	t.Logf("DNS bound %v after etcd started", time.Since(etcdStarted).Round(time.Millisecond))
	waitSocketReadyz(t, socket, 200, "ok")
	if err := askIn(n); err != nil {
		t.Fatalf("a query once synced: %v", err)
	}
}

// askIn asks the node-local address one query from inside the namespace.
func askIn(n *testNetns) error {
	return n.do(func() error {
		c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
		_, _, err := c.Exchange(new(dns.Msg).SetQuestion("cluster.local.", dns.TypeSOA), nodeLocalAddr)
		return err
	})
}

func TestProbeExitsZeroOnlyOnA200(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "health.sock")
	cmd, _, _ := startReady(t, nil, "--health-socket", socket, "--lameduck", "60s")
	if code, stdout, stderr := runBinary(t, nil, "probe", "--socket", socket); code != 0 || !strings.Contains(stdout, "ok") {
		t.Errorf("probe of a ready skydns: exit %d, stdout %q, stderr %q; want 0 and ok", code, stdout, stderr)
	}
	if code, _, stderr := runBinary(t, []string{"SKYDNS_HEALTH_SOCKET=" + socket}, "probe", "--path", "/healthz"); code != 0 {
		t.Errorf("probe of /healthz through SKYDNS_HEALTH_SOCKET: exit %d, stderr %q; want 0", code, stderr)
	}
	cmd.Process.Signal(syscall.SIGTERM) // the lameduck: /readyz 503
	polltest.Eventually(t, "probe failing in the lameduck", func() error {
		code, _, stderr := runBinary(t, nil, "probe", "--socket", socket)
		if code != 1 || !strings.Contains(stderr, "503") || !strings.Contains(stderr, "lameduck") {
			return fmt.Errorf("exit %d, stderr %q; want 1 and the status and body", code, stderr)
		}
		return nil
	})
	if code, _, stderr := runBinary(t, nil, "probe", "--socket", filepath.Join(t.TempDir(), "none.sock")); code != 1 || stderr == "" {
		t.Errorf("probe of a missing socket: exit %d, stderr %q; want 1 and why", code, stderr)
	}
	if code, _, stderr := runBinary(t, nil, "probe"); code != 2 || !strings.Contains(stderr, "--socket") {
		t.Errorf("probe without a socket: exit %d, stderr %q; want 2 naming --socket", code, stderr)
	}
}
