package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a child has to exit after SIGTERM before SIGKILL.
const stopGrace = 15 * time.Second

// child is a server process the demo started. Its output goes to a log
// file; it runs in its own process group, so a Ctrl-C reaches only the demo,
// which then stops the children in order.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // the exit status, once done is closed
}

// startChild starts path with args, appending its output to
// logDir/<name>.log.
func startChild(name, path string, args []string, logDir string) (*child, error) {
	logPath := filepath.Join(logDir, name+".log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "=== kubesky-demo %s: %s %q\n", time.Now().Format(time.RFC3339), path, args)
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		out.Close()
		close(c.done)
	}()
	return c, nil
}

// exitError returns a description of the exit when the child has exited,
// else nil.
func (c *child) exitError() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited (%v); the end of %s:\n%s", c.name, c.err, c.log, tail(c.log, 20))
	default:
		return nil
	}
}

// stop sends SIGTERM, waits up to grace, then SIGKILL; it returns once the
// process has exited.
func (c *child) stop(grace time.Duration) {
	if c.exitError() != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// children are the started processes, stopped in reverse start order.
type children struct {
	mu   sync.Mutex
	list []*child
	// exited receives each child that exits, on purpose or not.
	exited chan *child
}

func newChildren() *children {
	return &children{exited: make(chan *child, 16)}
}

// start starts a child and tracks it.
func (cs *children) start(name, path string, args []string, logDir string) (*child, error) {
	c, err := startChild(name, path, args, logDir)
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	go func() {
		<-c.done
		cs.exited <- c
	}()
	return c, nil
}

// stopAll stops every child, the last started first, calling report before
// each. A child that does not stop within grace is killed.
func (cs *children) stopAll(grace time.Duration, report func(name string)) {
	cs.mu.Lock()
	list := append([]*child(nil), cs.list...)
	cs.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].exitError() == nil {
			report(list[i].name)
		}
		list[i].stop(grace)
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("(reading %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
