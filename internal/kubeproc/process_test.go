package kubeproc

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/polltest"
)

// childModeEnv makes the test binary act as a child server in these tests
// instead of running the tests.
const childModeEnv = "KUBEPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childModeEnv) {
	case "":
		os.Exit(m.Run())
	case "serve": // runs until SIGTERM, then exits 0
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		os.Stdout.WriteString("ready\n")
		<-ch
		os.Exit(0)
	case "stubborn": // ignores SIGTERM
		signal.Ignore(syscall.SIGTERM)
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Hour)
	case "crash":
		os.Stderr.WriteString("boom: cannot bind\n")
		os.Exit(3)
	}
}

func startTestChild(t *testing.T, g *Group, name, mode string) *Process {
	t.Helper()
	t.Setenv(childModeEnv, mode)
	p, err := g.Start(Spec{Name: name, Path: os.Args[0], Log: filepath.Join(t.TempDir(), name+".log"), StartLine: "=== " + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	return p
}

func TestGroup(t *testing.T) {
	t.Run("StopAll stops the processes in reverse order", func(t *testing.T) {
		g := NewGroup()
		first := startTestChild(t, g, "first", "serve")
		second := startTestChild(t, g, "second", "serve")
		waitForReady(t, first)
		waitForReady(t, second)
		var order []string
		g.StopAll(5*time.Second, func(name string) { order = append(order, name) })
		if strings.Join(order, ",") != "second,first" {
			t.Fatalf("stopped %v", order)
		}
		for _, p := range []*Process{first, second} {
			if exited, err := p.Exited(); !exited || err != nil {
				t.Errorf("%s: exited %v (%v), want a clean exit", p.Name, exited, err)
			}
		}
	})
	t.Run("a process that ignores SIGTERM is killed after the grace period", func(t *testing.T) {
		p := startTestChild(t, NewGroup(), "stubborn", "stubborn")
		waitForReady(t, p)
		start := time.Now()
		stopErr := p.Stop(200 * time.Millisecond)
		if _, err := p.Exited(); time.Since(start) > 5*time.Second || err == nil {
			t.Fatalf("stop took %s, exit %v", time.Since(start), err)
		}
		if stopErr == nil || !strings.Contains(stopErr.Error(), "killed") {
			t.Fatalf("stop: %v, want an error saying it was killed", stopErr)
		}
	})
	t.Run("stopping a process that failed earlier reports how it ended", func(t *testing.T) {
		p := startTestChild(t, NewGroup(), "failed", "crash")
		<-p.Done()
		if err := p.Stop(time.Second); err == nil || !strings.Contains(err.Error(), "already exited") {
			t.Fatalf("stop: %v", err)
		}
	})
	t.Run("a process that dies is reported with the end of its log", func(t *testing.T) {
		g := NewGroup()
		startTestChild(t, g, "crasher", "crash")
		select {
		case p := <-g.Exited:
			err := p.ExitError()
			if err == nil || !strings.Contains(err.Error(), "boom: cannot bind") || !strings.Contains(err.Error(), "exit status 3") {
				t.Fatalf("exit error %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no exit reported")
		}
	})
	t.Run("the start line heads the log", func(t *testing.T) {
		p := startTestChild(t, NewGroup(), "headed", "serve")
		waitForReady(t, p)
		if got := Tail(p.Log, 5); !strings.HasPrefix(got, "=== headed\n") {
			t.Fatalf("log %q", got)
		}
	})
	t.Run("a missing binary is an error", func(t *testing.T) {
		_, err := NewGroup().Start(Spec{Name: "ghost", Path: "/nonexistent/ghost", Log: filepath.Join(t.TempDir(), "ghost.log")})
		if err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("no command is an error", func(t *testing.T) {
		if _, err := Start(Spec{Name: "empty", Log: filepath.Join(t.TempDir(), "empty.log")}); err == nil {
			t.Fatal("want an error")
		}
	})
}

// waitForReady waits until the child has set up its signal handling and
// said so in its log, so that a test's SIGTERM does not arrive before.
func waitForReady(t *testing.T, p *Process) {
	t.Helper()
	polltest.Within(t, 10*time.Second, p.Name+" saying ready", func() error {
		if !strings.Contains(Tail(p.Log, 5), "ready") {
			return errors.New("not in its log yet")
		}
		return nil
	})
}
