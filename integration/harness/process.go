package harness

import (
	"bytes"
	"fmt"
	"os"

	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const DefaultStopTimeout = 10 * time.Second

// StartHeader begins the line Start writes to the log before each run, so
// that a reader of the log can tell the runs apart.
const StartHeader = "=== harness: starting "

// logTailLines is how many lines of a process's log a failing test prints.
const logTailLines = 150

// ProcessSpec describes a server process to run.
type ProcessSpec struct {
	Name        string        // label for logs; defaults to the base name of Path
	Path        string        // the binary; see Binary
	Args        []string      // arguments, without the program name
	Env         []string      // KEY=value pairs added to the test's environment
	StopTimeout time.Duration // SIGTERM→SIGKILL grace; DefaultStopTimeout when zero
}

// Process is a server started by a test. Its stdout and stderr go to one log
// file (kept across restarts) whose tail is printed if the test fails. A
// Process that exits on its own, without Stop or Kill, fails the test.
type Process struct {
	t    testing.TB
	spec ProcessSpec
	log  string

	mu       sync.Mutex
	run      *kubeproc.Process // the current run; nil before the first Start
	stopping bool              // the current run is being stopped on purpose
}

// StartProcess starts spec and registers a cleanup that stops it (and prints
// the log's tail when the test failed). It fails the test if the binary
// cannot be started.
func StartProcess(t testing.TB, spec ProcessSpec) *Process {
	t.Helper()
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Path)
	}
	if spec.StopTimeout == 0 {
		spec.StopTimeout = DefaultStopTimeout
	}
	p := &Process{t: t, spec: spec, log: filepath.Join(t.TempDir(), spec.Name+".log")}
	t.Cleanup(p.cleanup)
	p.Start()
	return p
}

// Name returns the process's label.
func (p *Process) Name() string { return p.spec.Name }

// LogPath returns the file holding the process's output.
func (p *Process) LogPath() string { return p.log }

// Start starts the process again with the same spec, after Stop or Kill. It
// fails the test when the process is running or cannot be started.
func (p *Process) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != nil {
		if exited, _ := p.run.Exited(); !exited {
			p.t.Fatalf("%s: Start while already running", p.spec.Name)
		}
	}
	run, err := kubeproc.Start(kubeproc.Spec{
		Name:      p.spec.Name,
		Path:      p.spec.Path,
		Args:      p.spec.Args,
		Env:       p.spec.Env,
		Log:       p.log,
		StartLine: fmt.Sprintf("%s%s %q", StartHeader, p.spec.Path, p.spec.Args),
	})
	if err != nil {
		p.t.Fatalf("%s: %v", p.spec.Name, err)
	}
	p.run, p.stopping = run, false
	go p.wait(run)
}

// wait reports an unexpected exit of one run.
func (p *Process) wait(run *kubeproc.Process) {
	<-run.Done()
	_, err := run.Exited()
	p.mu.Lock()
	defer p.mu.Unlock()
	if run == p.run && !p.stopping {
		p.t.Errorf("%s exited unexpectedly: %v (log: %s)", p.spec.Name, err, p.log)
	}
}

// PID returns the process id of the current run, or 0 before the first
// Start.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return 0
	}
	return p.run.PID()
}

// Exited reports whether the current run has exited, and how.
func (p *Process) Exited() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return false, nil
	}
	return p.run.Exited()
}

// WaitForLog waits until a line of the process's own output (not the
// harness's start lines) contains substr, failing the test after timeout or
// if the process exits first.
func (p *Process) WaitForLog(substr string, timeout time.Duration) {
	p.t.Helper()
	err := Poll(timeout, func() error {
		if p.logContains(substr) {
			return nil
		}
		if err := p.ErrIfExited(); err != nil {
			return err
		}
		return fmt.Errorf("%s: no log line contains %q", p.spec.Name, substr)
	})
	if err != nil {
		p.t.Fatal(err)
	}
}

func (p *Process) logContains(substr string) bool {
	_, ok := p.LogLine(substr)
	return ok
}

// LogLine returns the first line of the process's own output (not the
// harness's start lines), over every run, that contains substr, without
// its newline.
func (p *Process) LogLine(substr string) (string, bool) {
	data, _ := os.ReadFile(p.log)
	for line := range bytes.Lines(data) {
		if !bytes.HasPrefix(line, []byte(StartHeader)) && bytes.Contains(line, []byte(substr)) {
			return string(bytes.TrimRight(line, "\n")), true
		}
	}
	return "", false
}

// ErrIfExited returns a Permanent error when the process has exited, for use
// in readiness conditions passed to Poll or Eventually.
func (p *Process) ErrIfExited() error {
	if exited, err := p.Exited(); exited {
		return Permanent(fmt.Errorf("%s exited: %v; log tail:\n%s", p.spec.Name, err, p.tail()))
	}
	return nil
}

// Stop sends SIGTERM, waits up to the spec's StopTimeout, then sends SIGKILL.
// It returns once the process has exited; stopping a stopped process is a
// no-op.
func (p *Process) Stop() {
	p.terminate(syscall.SIGTERM, p.spec.StopTimeout)
}

// Kill sends SIGKILL, as a crash would, and waits for the exit.
func (p *Process) Kill() {
	p.terminate(syscall.SIGKILL, 0)
}

func (p *Process) terminate(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	run := p.run
	if run == nil {
		p.mu.Unlock()
		return
	}
	p.stopping = true
	p.mu.Unlock()
	if sig == syscall.SIGKILL {
		run.Kill()
	} else {
		_ = run.Stop(grace) // an exit before the stop was reported by wait
	}
}

// cleanup stops the process at the end of the test and, if the test failed,
// prints the tail of its log.
func (p *Process) cleanup() {
	p.Stop()
	if p.t.Failed() {
		p.t.Logf("--- last %d lines of %s (%s):\n%s", logTailLines, p.spec.Name, p.log, p.tail())
	}
}

// tail returns the last logTailLines lines of the log.
func (p *Process) tail() string {
	return kubeproc.Tail(p.log, logTailLines)
}

// Pause stops the process with SIGSTOP, as a hung machine or a long
// garbage-collection pause would; Continue resumes it.
func (p *Process) Pause() { p.signal(syscall.SIGSTOP) }

// Continue resumes a paused process with SIGCONT.
func (p *Process) Continue() { p.signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) {
	p.t.Helper()
	pid := p.PID()
	if pid == 0 {
		p.t.Fatalf("%s: %v before the first Start", p.spec.Name, sig)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		p.t.Errorf("%s: %v: %v", p.spec.Name, sig, err)
	}
}
