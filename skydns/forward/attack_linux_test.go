package forward

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"
)

// inOwnNetNS marks the copy of the test binary that runs the attack in a
// network namespace of its own.
const inOwnNetNS = "KUBESKY_FORWARD_ATTACK_NETNS"

// The blind attack: a forwarder with its cache asks a slow upstream on
// 127.0.0.1 (it answers after attackLatency) for attackLookups fresh names,
// attackBatch at a time, while an off-path attacker floods 127.0.0.1's
// ephemeral ports with forged answers for those names: sent from the
// upstream's own address and port, with guessed IDs, guessed case and a
// poison address. No forged answer may be served or cached.
const (
	attackLookups = 100
	attackBatch   = 10
	attackLatency = 200 * time.Millisecond
	attackMaxSent = 400_000 // forged datagrams at most
	poisonIP      = "203.0.113.66"
)

// TestForwarderUnderBlindAttack floods ports of 127.0.0.1, so it runs in a
// network namespace of its own: the test binary runs itself again there,
// and nothing of the flood reaches other programs on this machine.
func TestForwarderUnderBlindAttack(t *testing.T) {
	if os.Getenv(inOwnNetNS) == "" {
		runInOwnNetNS(t)
		return
	}
	upLoopback(t)
	blindAttack(t)
}

// runInOwnNetNS runs this test again in a new user and network namespace.
func runInOwnNetNS(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestForwarderUnderBlindAttack$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), inOwnNetNS+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Skipf("no network namespace of its own for the flood (%v); not flooding this machine's ports", err)
	}
	t.Logf("in its own network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the attack test failed: %v", err)
	}
}

// upLoopback brings up lo, which a new network namespace has down.
func upLoopback(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
}

func blindAttack(t *testing.T) {
	up, attacker := startSlowUpstream(t)
	cfg := testConfig(up.addr)
	cfg.ForwardTimeout, cfg.ForwardDeadline = 2*time.Second, 4*time.Second
	f, _, _ := testForwarder(t, cfg)

	var targets atomic.Pointer[[]string]
	done := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	seed := uint64(time.Now().UnixNano())
	t.Logf("the attacker's guesses: seed %d", seed)
	guesser := rand.New(rand.NewPCG(seed, 0))
	wg.Go(func() { flood(attacker, guesser, &targets, done, &sent) })

	start := time.Now()
	for b := range attackLookups / attackBatch {
		names := make([]string, attackBatch)
		for i := range names {
			names[i] = fmt.Sprintf("fresh-%d.example.org.", b*attackBatch+i)
		}
		targets.Store(&names)
		lookUpAll(t, f, names)
	}
	elapsed := time.Since(start)
	close(done)
	wg.Wait()

	for i := range attackLookups { // again: from the cache
		wantA(t, ask(t, f, fmt.Sprintf("fresh-%d.example.org.", i), dns.TypeA), realIP(i), 300)
	}
	if hits := value(f.metrics.hits); hits != attackLookups {
		t.Errorf("cache hits %v, want %d", hits, attackLookups)
	}
	t.Logf("%d lookups in %s under %d forged answers (%.0f a second); forged datagrams that reached a forwarding socket, by why they were ignored: %s; poisoned: 0",
		attackLookups, elapsed.Round(time.Millisecond), sent.Load(), float64(sent.Load())/elapsed.Seconds(), ignoredByReason(f))
}

// lookUpAll asks for names at once and checks every answer is the real one.
func lookUpAll(t *testing.T, f *Forwarder, names []string) {
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			m := f.ServeForward(t.Context(), query(name, dns.TypeA), localClient)
			i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "fresh-"), ".example.org."))
			if len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != realIP(i) {
				t.Errorf("%s: answer %v, want A %s", name, m.Answer, realIP(i))
			}
		})
	}
	wg.Wait()
}

func realIP(i int) string { return fmt.Sprintf("192.0.2.%d", i%250+1) }

// ignoredByReason lists the non-zero ignored-replies counts.
func ignoredByReason(f *Forwarder) string {
	var out []string
	for _, reason := range []string{ignoredSource, ignoredID, ignoredMalformed, ignoredQuestion, ignoredCase, ignoredCookie, ignoredNoCookie} {
		if n := value(f.metrics.ignored.WithLabelValues(reason)); n > 0 {
			out = append(out, fmt.Sprintf("%s %v", reason, n))
		}
	}
	return strings.Join(out, ", ")
}

// startSlowUpstream starts an upstream on 127.0.0.1 that answers
// fresh-<i>.example.org. with realIP(i) after attackLatency, and returns it
// with the attacker's socket: bound to the same address and port
// (SO_REUSEPORT), so that its datagrams come from the upstream's own
// address and port, and never given a query (a BPF program sends every
// datagram to the upstream's socket).
func startSlowUpstream(t *testing.T) (*scriptedUpstream, *net.UDPConn) {
	lc := net.ListenConfig{Control: reusePort}
	pc, err := lc.ListenPacket(t.Context(), "udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.(*net.UDPConn)
	steerToFirst(t, conn)
	apc, err := lc.ListenPacket(t.Context(), "udp4", conn.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	u := &scriptedUpstream{addr: conn.LocalAddr().String()}
	var wg sync.WaitGroup
	wg.Go(func() { u.serve(conn, answerSlowly(conn, &wg)) })
	t.Cleanup(func() {
		conn.Close()
		apc.Close()
		wg.Wait()
	})
	return u, apc.(*net.UDPConn)
}

// answerSlowly answers q, for fresh-<i>.example.org., with realIP(i)
// after attackLatency.
func answerSlowly(conn *net.UDPConn, wg *sync.WaitGroup) func(q *dns.Msg, from netip.AddrPort) {
	return func(q *dns.Msg, from netip.AddrPort) {
		var i int
		_, _ = fmt.Sscanf(strings.ToLower(q.Question[0].Name), "fresh-%d.", &i)
		out, _ := realAnswer(q, realIP(i)).Pack()
		wg.Add(1)
		time.AfterFunc(attackLatency, func() {
			defer wg.Done()
			_, _ = conn.WriteToUDPAddrPort(out, from)
		})
	}
}

func reusePort(_, _ string, c syscall.RawConn) error {
	var opErr error
	err := c.Control(func(fd uintptr) {
		opErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	return errors.Join(err, opErr)
}

// steerToFirst attaches to conn's SO_REUSEPORT group a classic BPF program
// that gives every datagram to the group's first socket, conn.
func steerToFirst(t *testing.T, conn *net.UDPConn) {
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	prog := unix.SockFprog{Len: 1, Filter: &unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	var opErr error
	if err := raw.Control(func(fd uintptr) {
		opErr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &prog)
	}); err != nil || opErr != nil {
		t.Fatalf("attaching the BPF program: %v %v", err, opErr)
	}
}

// flood sends forged answers for the current targets from conn until done
// or attackMaxSent: to a random port of the ephemeral range, a random ID,
// the name in random case, the answer poisonIP.
func flood(conn *net.UDPConn, r *rand.Rand, targets *atomic.Pointer[[]string], done <-chan struct{}, sent *atomic.Int64) {
	lo, hi := ephemeralPorts()
	forged := map[string][]byte{}
	for sent.Load() < attackMaxSent {
		select {
		case <-done:
			return
		default:
		}
		names := targets.Load()
		if names == nil {
			continue
		}
		name := (*names)[r.IntN(len(*names))]
		if forged[name] == nil {
			forged[name] = forgedAnswer(name)
		}
		packet := guess(r, forged[name], len(name))
		to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(lo+r.IntN(hi-lo+1)))
		_, _ = conn.WriteToUDPAddrPort(packet, to)
		sent.Add(1)
	}
}

// forgedAnswer is a packed answer to name with poisonIP.
func forgedAnswer(name string) []byte {
	m := new(dns.Msg).SetQuestion(name, dns.TypeA)
	m.Response, m.RecursionAvailable = true, true
	m.Answer = []dns.RR{rr(name + " 300 IN A " + poisonIP)}
	m.SetEdns0(udpSize, false)
	out, _ := m.Pack()
	return out
}

// guess is a copy of packet with a random ID and the case of the name
// (nameLen bytes from offset 12) chosen at random.
func guess(r *rand.Rand, packet []byte, nameLen int) []byte {
	out := append([]byte(nil), packet...)
	binary.BigEndian.PutUint16(out, uint16(r.Uint32()))
	for i := 12; i < 12+nameLen; i++ {
		if c := out[i] | 0x20; c >= 'a' && c <= 'z' && r.IntN(2) == 0 {
			out[i] ^= 0x20
		}
	}
	return out
}

// ephemeralPorts is the kernel's range of ephemeral ports.
func ephemeralPorts() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if _, err := fmt.Sscan(string(b), &lo, &hi); err == nil && lo > 0 && hi >= lo {
			return lo, hi
		}
	}
	return 32768, 60999
}
