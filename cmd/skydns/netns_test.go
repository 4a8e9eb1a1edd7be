package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubesky/kubesky/internal/polltest"
)

// testNetns is a network namespace a test made (ip netns add) with only
// its loopback up; it is removed when the test ends.
type testNetns struct{ name string }

// newNetns makes a network namespace, or skips the test when it cannot:
// that needs root and iproute2.
func newNetns(t *testing.T) *testNetns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create a network namespace (ip netns add)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: needs the ip command (iproute2)")
	}
	n := &testNetns{name: fmt.Sprintf("kubesky-nl-test-%08x", rand.Uint32())}
	if out, err := exec.Command("ip", "netns", "add", n.name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", n.name, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", n.name).Run() })
	n.run(t, "ip", "link", "set", "lo", "up")
	return n
}

// run runs a command inside the namespace and returns its output.
func (n *testNetns) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := n.command(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns exec %s %s: %v\n%s", n.name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (n *testNetns) command(args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.name}, args...)...)
}

// do runs f on an OS thread that has entered the namespace: sockets f
// opens, and processes it starts, belong to the namespace. The thread is
// never returned to the Go scheduler; it ends with f's goroutine.
func (n *testNetns) do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread dies in the namespace
		fd, err := unix.Open(filepath.Join("/run/netns", n.name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering %s: %w", n.name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// start starts the skydns binary inside the namespace (as cred's user when
// not nil), killed when the test ends, and returns it and its log lines.
func (n *testNetns) start(t *testing.T, cred *syscall.Credential, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	return n.startProgram(t, cred, skydnsBinary(t), args...)
}

// startProgram starts the program at path inside the namespace, as start
// starts skydns.
func (n *testNetns) startProgram(t *testing.T, cred *syscall.Credential, path string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = cleanEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.do(cmd.Start); err != nil {
		t.Fatalf("starting %s in %s: %v", filepath.Base(path), n.name, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	logs := make(chan string, 1000)
	go scanLines(stderr, logs)
	return cmd, logs
}

// nodeLocalAddr is the node-local address the tests use, inside their
// namespaces only.
const nodeLocalAddr = "169.254.20.10:53"

// nodeLocalArgs are the flags of a node-local skydns with its embedded
// etcd in dir and its health socket dir/health.sock, then extra.
func nodeLocalArgs(dir string, extra ...string) []string {
	return append([]string{"--node-local-interface", "kubesky-nl0", "--dns-addr", nodeLocalAddr, "--http-addr", "127.0.0.1:0",
		"--health-socket", filepath.Join(dir, "health.sock"), "--embedded-etcd-addr", "127.0.0.1:0", "--etcd-data-dir", filepath.Join(dir, "etcd"),
		"--upstream", "127.0.0.1:53", "--udp-sockets", "2"}, extra...)
}

// socketGet GETs path on a health socket: the status and the body.
func socketGet(socket, path string) (int, string, error) {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	resp, err := client.Get("http://skydns" + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// waitSocketReadyz polls /readyz on a health socket until it answers code
// with substr in its body.
func waitSocketReadyz(t *testing.T, socket string, code int, substr string) {
	t.Helper()
	polltest.Within(t, 30*time.Second, fmt.Sprintf("/readyz on %s answering %d %q", socket, code, substr), func() error {
		got, body, err := socketGet(socket, "/readyz")
		if err != nil {
			return err
		}
		if got != code || !strings.Contains(body, substr) {
			return fmt.Errorf("%d %q", got, body)
		}
		return nil
	})
}

// stillRunning fails the test if cmd has exited.
func stillRunning(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("skydns is no longer running: %v", err)
	}
}

// errNotAnswered is a query that got no answer.
var errNotAnswered = errors.New("no answer")
