package sockshare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubesky/kubesky/internal/polltest"
)

// adoptions records what a Sharer's Adopt was given.
type adoptions struct {
	got chan []*net.UDPConn
}

func newAdoptions() *adoptions { return &adoptions{got: make(chan []*net.UDPConn, 4)} }

func (a *adoptions) adopt(_ context.Context, conns []*net.UDPConn) { a.got <- conns }

func (a *adoptions) next(t *testing.T) []*net.UDPConn {
	t.Helper()
	select {
	case conns := <-a.got:
		return conns
	case <-time.After(10 * time.Second):
		t.Fatal("no adoption within 10 s")
		return nil
	}
}

func udpConn(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sharer is a started Sharer and its log.
type sharer struct {
	*Sharer
	logs *syncBuffer
}

func start(t *testing.T, dir string, conns []*net.UDPConn, adopt func(context.Context, []*net.UDPConn)) sharer {
	t.Helper()
	logs := &syncBuffer{}
	s, err := Start(Config{Dir: dir, Conns: conns, Adopt: adopt, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return sharer{s, logs}
}

// waitShared waits until s has exchanged sockets with n peers.
func waitShared(t *testing.T, s sharer, n int) {
	t.Helper()
	polltest.Within(t, 10*time.Second, fmt.Sprintf("sockets shared with %d peers", n), func() error {
		if got := strings.Count(s.logs.String(), "sharing sockets with a peer"); got < n {
			return fmt.Errorf("with %d; the log:\n%s", got, s.logs)
		}
		return nil
	})
}

// A peer that goes takes nothing with it: its socket, with the datagram
// queued in it and never read, reaches the survivor's Adopt.
func TestAGonePeersQueuedDatagramsReachTheSurvivor(t *testing.T) {
	dir := t.TempDir()
	survivorConn, goneConn := udpConn(t), udpConn(t)
	survivor := newAdoptions()
	start(t, dir, []*net.UDPConn{survivorConn}, survivor.adopt)
	gone := start(t, dir, []*net.UDPConn{goneConn}, func(context.Context, []*net.UDPConn) { t.Error("the gone peer adopted") })
	waitShared(t, gone, 1)

	client := udpConn(t)
	if _, err := client.WriteToUDP([]byte("queued"), goneConn.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, goneConn)
	goneConn.Close() // as its process's exit would
	gone.Close()

	conns := survivor.next(t)
	if len(conns) != 1 || conns[0].LocalAddr().String() != goneConn.LocalAddr().String() {
		t.Fatalf("adopted %v, want the gone peer's %s", localAddrs(conns), goneConn.LocalAddr())
	}
	defer conns[0].Close()
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, from, err := conns[0].ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "queued" || from.String() != client.LocalAddr().String() {
		t.Fatalf("read %q from %v (%v), want the queued datagram from %s", buf[:n], from, err, client.LocalAddr())
	}
}

// Sharing goes both ways, whichever peer started first, and a Sharer
// that closes adopts nothing it holds.
func TestPeersShareBothWaysAndAClosingSharerAdoptsNothing(t *testing.T) {
	dir := t.TempDir()
	first, second := newAdoptions(), newAdoptions()
	a := start(t, dir, []*net.UDPConn{udpConn(t), udpConn(t)}, first.adopt)
	b := start(t, dir, []*net.UDPConn{udpConn(t)}, second.adopt)
	waitShared(t, a, 1)
	waitShared(t, b, 1)
	b.Close()
	if got := first.next(t); len(got) != 1 {
		t.Errorf("the first adopted %d sockets of the second, want 1", len(got))
	}
	a.Close()
	select {
	case got := <-second.got:
		t.Errorf("the closed second adopted %v", localAddrs(got))
	default:
	}
}

// A socket file nobody listens on, left by a process killed before it
// could remove it, is removed by the next Sharer.
func TestAStaleSocketFileIsRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "skydns-stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	start(t, dir, []*net.UDPConn{udpConn(t)}, newAdoptions().adopt)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale socket file is still there: %v", err)
	}
}

func TestStartRefusesBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no sockets", Config{Dir: t.TempDir()}, "0 UDP sockets"},
		{"a holder sharing sockets", Config{Dir: t.TempDir(), Holder: true, Conns: []*net.UDPConn{udpConn(t)}}, "none for a holder"},
		{"a directory that does not exist", Config{Dir: filepath.Join(t.TempDir(), "none"), Conns: []*net.UDPConn{udpConn(t)}}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(tc.cfg)
			if err == nil {
				s.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// Whatever a peer sends that is not the protocol's message, or that
// carries descriptors other than UDP sockets, is refused with a log line
// naming why; every descriptor it carried is closed; the Sharer adopts
// nothing and still shares with a real peer afterwards.
func TestAMalformedPeerMessageIsRefused(t *testing.T) {
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp := udpConn(t)
	for _, tc := range []struct {
		name string
		text string
		fds  []int
		want string
	}{
		{"not the protocol", "hello", []int{fdOf(t, udp)}, "is not a skydns-sockets/1 message"},
		{"no descriptors", hello + " 1", nil, "names 1 sockets and carries 0"},
		{"fewer descriptors than named", hello + " 2", []int{fdOf(t, udp)}, "names 2 sockets and carries 1"},
		{"a pipe", hello + " 1", []int{int(pipeR.Fd())}, "is not a socket"},
		{"a TCP socket", hello + " 1", []int{fdOf(t, tcp.(*net.TCPListener))}, "is not a UDP socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			adopted := newAdoptions()
			s := start(t, dir, []*net.UDPConn{udpConn(t)}, adopted.adopt)
			open := openFDs(t)
			c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: s.path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			var rights []byte
			if tc.fds != nil {
				rights = unix.UnixRights(tc.fds...)
			}
			if _, _, err := c.WriteMsgUnix([]byte(tc.text), rights, nil); err != nil {
				t.Fatal(err)
			}
			waitLog(t, s.logs, tc.want)
			c.Close()
			polltest.Within(t, 5*time.Second, "the received descriptors closed", func() error {
				if n := openFDs(t); n != open {
					return fmt.Errorf("%d descriptors open, %d before the message", n, open)
				}
				return nil
			})
			select {
			case got := <-adopted.got:
				t.Errorf("adopted %v", localAddrs(got))
			case <-time.After(100 * time.Millisecond): // nothing to poll for: a check that nothing happens
			}
			peer := newAdoptions()
			p := start(t, dir, []*net.UDPConn{udpConn(t)}, peer.adopt)
			waitShared(t, p, 1)
		})
	}
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// fdOf is c's descriptor.
func fdOf(t *testing.T, c interface {
	SyscallConn() (syscall.RawConn, error)
}) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// waitQueued waits until c holds a datagram not yet read.
func waitQueued(t *testing.T, c *net.UDPConn) {
	t.Helper()
	fd := fdOf(t, c)
	polltest.Within(t, 5*time.Second, "a datagram queued", func() error {
		n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
		if err == nil && n == 0 {
			err = errors.New("nothing queued")
		}
		return err
	})
}

func waitLog(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	polltest.Within(t, 10*time.Second, "a log line saying "+want, func() error {
		if !strings.Contains(logs.String(), want) {
			return fmt.Errorf("the log:\n%s", logs)
		}
		return nil
	})
}

func localAddrs(conns []*net.UDPConn) []string {
	var out []string
	for _, c := range conns {
		out = append(out, c.LocalAddr().String())
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A holder shares no sockets: a skydns sharing with one adopts nothing when
// the holder goes, and the holder is told when the skydns's sockets arrive.
func TestAHolderHoldsAndIsNeverAdopted(t *testing.T) {
	dir := t.TempDir()
	conn := udpConn(t)
	skydns := start(t, dir, []*net.UDPConn{conn}, func(context.Context, []*net.UDPConn) { t.Error("a holder's sockets adopted") })
	attached := make(chan struct{}, 1)
	holderAdopts := newAdoptions()
	h, err := Start(Config{Dir: dir, Holder: true, Adopt: holderAdopts.adopt, Attached: func() { attached <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-attached:
	case <-time.After(10 * time.Second):
		t.Fatal("the holder was not told of the skydns's sockets within 10 s")
	}
	waitShared(t, skydns, 1)
	h.Close()
	h, err = Start(Config{Dir: dir, Holder: true, Adopt: holderAdopts.adopt})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	waitShared(t, skydns, 2)
	skydns.Close()
	if got := holderAdopts.next(t); len(got) != 1 || got[0].LocalAddr().String() != conn.LocalAddr().String() {
		t.Fatalf("the holder adopted %v, want the skydns's %s", localAddrs(got), conn.LocalAddr())
	}
}
