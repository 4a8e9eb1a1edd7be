package kubeproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Spec describes a server process to run.
type Spec struct {
	Name string   // label in errors and reports
	Path string   // the binary
	Args []string // arguments, without the program name
	Env  []string // KEY=value pairs added to this process's environment
	// Log is the file stdout and stderr are appended to.
	Log string
	// StartLine, if set, is written to Log before the process starts (a
	// header telling runs apart).
	StartLine string
}

// Process is one run of a server. Its output goes to a log file; it runs in
// its own process group, so a terminal's Ctrl-C reaches only the program
// that started it (which then stops its children in order), and on Linux the
// kernel kills it when that program dies.
type Process struct {
	Name string
	Log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // the exit status, once done is closed
}

// Start starts spec.
func Start(spec Spec) (*Process, error) {
	out, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if spec.StartLine != "" {
		fmt.Fprintln(out, spec.StartLine)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	p := &Process{Name: spec.Name, Log: spec.Log, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// ExitError returns a description of the exit, with the end of the log,
// when the process has exited; else nil.
func (p *Process) ExitError() error {
	if exited, err := p.Exited(); exited {
		return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.Name, err, p.Log, Tail(p.Log, 20))
	}
	return nil
}

// Stop sends SIGTERM, waits up to grace, then sends SIGKILL; it returns once
// the process has exited. An exit within grace is no error, whatever its
// status; the error says when the process had to be killed, or had
// exited with an error before Stop.
func (p *Process) Stop(grace time.Duration) error {
	if exited, err := p.Exited(); exited {
		if err != nil {
			return fmt.Errorf("%s had already exited: %w", p.Name, err)
		}
		return nil
	}
	if !p.terminate(syscall.SIGTERM, grace) {
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", p.Name, grace)
	}
	return nil
}

// Kill sends SIGKILL, as a crash would, and waits for the exit.
func (p *Process) Kill() {
	p.terminate(syscall.SIGKILL, 0)
}

// terminate sends sig unless the process has exited, waits up to grace
// for the exit, then kills it. It reports whether the process exited
// within grace.
func (p *Process) terminate(sig syscall.Signal, grace time.Duration) bool {
	if exited, _ := p.Exited(); exited {
		return true
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return true
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return false
	}
}

// Group is a set of started processes, stopped in reverse start order.
type Group struct {
	mu   sync.Mutex
	list []*Process
	// Exited receives each process that exits, on purpose or not.
	Exited chan *Process
}

// NewGroup returns an empty group.
func NewGroup() *Group {
	return &Group{Exited: make(chan *Process, 32)}
}

// Start starts spec and tracks the process.
func (g *Group) Start(spec Spec) (*Process, error) {
	p, err := Start(spec)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.list = append(g.list, p)
	g.mu.Unlock()
	go func() {
		<-p.done
		select {
		case g.Exited <- p:
		default: // nobody is reading; the exit is still seen through Exited()
		}
	}()
	return p, nil
}

// StopAll stops every process, the last started first, calling report
// before each one still running. One that does not stop within grace is
// killed.
func (g *Group) StopAll(grace time.Duration, report func(name string)) {
	g.mu.Lock()
	list := append([]*Process(nil), g.list...)
	g.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		if exited, _ := list[i].Exited(); !exited && report != nil {
			report(list[i].Name)
		}
		_ = list[i].Stop(grace) // report has named it; how it ended is in its log
	}
}

// Tail returns the last n lines of a file.
func Tail(path string, n int) string {
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
