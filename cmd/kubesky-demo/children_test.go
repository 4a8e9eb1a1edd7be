package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func startTestChild(t *testing.T, cs *children, name, mode string) *child {
	t.Helper()
	t.Setenv(childModeEnv, mode)
	c, err := cs.start(name, os.Args[0], nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(time.Second) })
	return c
}

func TestChildren(t *testing.T) {
	t.Run("stopAll stops the children in reverse order", func(t *testing.T) {
		cs := newChildren()
		first := startTestChild(t, cs, "first", "serve")
		second := startTestChild(t, cs, "second", "serve")
		waitForReady(t, first)
		waitForReady(t, second)
		var order []string
		cs.stopAll(5*time.Second, func(name string) { order = append(order, name) })
		if strings.Join(order, ",") != "second,first" {
			t.Fatalf("stopped %v", order)
		}
		for _, c := range []*child{first, second} {
			if c.exitError() == nil || c.err != nil {
				t.Errorf("%s: exit %v, want a clean exit", c.name, c.err)
			}
		}
	})
	t.Run("a child that ignores SIGTERM is killed after the grace period", func(t *testing.T) {
		cs := newChildren()
		c := startTestChild(t, cs, "stubborn", "stubborn")
		waitForReady(t, c)
		start := time.Now()
		c.stop(200 * time.Millisecond)
		if took := time.Since(start); took > 5*time.Second || c.err == nil {
			t.Fatalf("stop took %s, exit %v", took, c.err)
		}
	})
	t.Run("a child that dies is reported with the end of its log", func(t *testing.T) {
		cs := newChildren()
		startTestChild(t, cs, "crasher", "crash")
		select {
		case c := <-cs.exited:
			err := c.exitError()
			if err == nil || !strings.Contains(err.Error(), "boom: cannot bind") || !strings.Contains(err.Error(), "exit status 3") {
				t.Fatalf("exit error %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no exit reported")
		}
	})
	t.Run("a missing binary is an error", func(t *testing.T) {
		if _, err := newChildren().start("ghost", "/nonexistent/ghost", nil, t.TempDir()); err == nil {
			t.Fatal("want an error")
		}
	})
}

// waitForReady waits until the child has set up its signal handling and
// said so in its log, so that a test's SIGTERM does not arrive before.
func waitForReady(t *testing.T, c *child) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tail(c.log, 5), "ready") {
		if time.Now().After(deadline) {
			t.Fatalf("%s never said ready", c.name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
