package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/gotool"
)

// holderBinary builds ../skydns-holder into the tests' build directory.
func holderBinary(t *testing.T) string {
	t.Helper()
	skydnsBinary(t) // makes buildDir
	buildMu.Lock()
	defer buildMu.Unlock()
	bin := filepath.Join(buildDir, "skydns-holder")
	if out, err := gotool.Command("build", "-o", bin, "../skydns-holder").CombinedOutput(); err != nil {
		t.Fatalf("go build ../skydns-holder: %v\n%s", err, out)
	}
	return bin
}

// One node-local skydns and skydns-holder, as deploy/node-local runs them,
// under a steady load: kill -9 of skydns (the holder forwards its sockets'
// queries to an upstream skydns, the kube-dns Service's stand-in, until a
// new skydns attaches), then kill -9 of the holder (skydns keeps its own
// sockets) and of skydns once more with the restarted holder holding. Not
// one query may be lost or slower than 1 s.
func TestNodeLocalHolderKeepsAKilledSkydnsAnswered(t *testing.T) {
	n := newNetns(t)
	peers := t.TempDir()
	upstream, upLogs := n.start(t, nil, "--dns-addr", "127.0.0.1:1053", "--http-addr", "127.0.0.1:0", "--udp-sockets", "1",
		"--embedded-etcd-addr", "127.0.0.1:0", "--etcd-data-dir", filepath.Join(t.TempDir(), "etcd"))
	defer upstream.Process.Kill()
	waitLog(t, upLogs, regexp.MustCompile(`msg="(serving DNS)"`))
	startSkydns := func() *exec.Cmd {
		dir := t.TempDir()
		cmd, _ := n.start(t, nil, nodeLocalArgs(dir, "--node-local-peers", peers)...)
		waitSocketReadyz(t, filepath.Join(dir, "health.sock"), 200, "ok")
		return cmd
	}
	holder := holderBinary(t)
	startHolder := func() (*exec.Cmd, <-chan string) {
		cmd, logs := n.startProgram(t, nil, holder, "--dir", peers, "--upstream", "127.0.0.1:1053")
		waitLog(t, logs, regexp.MustCompile(`"msg":"(sharing sockets with a peer)"`))
		return cmd, logs
	}
	skydns := startSkydns()
	h, holderLogs := startHolder()
	load := startLoad(t, n, 200)
	load.waitAnswered(t, 200)

	killed := time.Now()
	skydns.Process.Kill()
	skydns.Wait()
	waitLog(t, holderLogs, regexp.MustCompile(`"msg":"(holding a gone skydns's sockets: forwarding their queries)"`))
	load.waitAnswered(t, load.answered.Load()+300)
	skydns = startSkydns()
	waitLog(t, holderLogs, regexp.MustCompile(`"msg":"(released a gone skydns's sockets)"`))
	load.waitAnswered(t, load.answered.Load()+200)

	h.Process.Kill()
	h.Wait()
	load.waitAnswered(t, load.answered.Load()+200)
	_, holderLogs = startHolder()
	skydns.Process.Kill()
	skydns.Wait()
	waitLog(t, holderLogs, regexp.MustCompile(`"msg":"(holding a gone skydns's sockets: forwarding their queries)"`))
	load.waitAnswered(t, load.answered.Load()+300)
	load.stop()

	var zero time.Time
	before, after := load.between(zero, killed), load.between(killed, zero)
	t.Logf("before the first kill -9: %s; from it on (two kills of skydns, one of the holder): %s", before, after)
	if before.failed() || after.failed() || after.answered < 1000 {
		t.Errorf("queries lost or slow, or too few sent; first failures: %v", load.failures(3))
	}
}
