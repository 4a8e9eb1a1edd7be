package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Spec says how to run a process.
type Spec struct {
	// Name names the process in errors and its log file.
	Name string
	// Argv is the command and its arguments.
	Argv []string
	// Env is added to this process's environment.
	Env []string
	// CPU pins the process to this CPU with taskset; -1 leaves it free.
	CPU int
	// Log receives the process's stdout and stderr; "" discards them.
	Log string
}

// Process is a running child process.
type Process struct {
	Name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
	err  error         // Wait's error, set before done closes
}

// Start starts the process. taskset execs the command, so Pid is the
// command's own process id.
func Start(s Spec) (*Process, error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("%s: no command", s.Name)
	}
	argv := s.Argv
	if s.CPU >= 0 {
		argv = append([]string{"taskset", "-c", strconv.Itoa(s.CPU)}, argv...)
	}
	p := &Process{Name: s.Name, cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), s.Env...)
	if err := p.openLog(s.Log); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		p.closeLog()
		return nil, fmt.Errorf("starting %s (%s): %w", s.Name, argv[0], err)
	}
	go p.wait()
	return p, nil
}

func (p *Process) openLog(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s log: %w", p.Name, err)
	}
	p.log = f
	p.cmd.Stdout, p.cmd.Stderr = f, f
	return nil
}

func (p *Process) closeLog() {
	if p.log != nil {
		p.log.Close()
	}
}

func (p *Process) wait() {
	p.err = p.cmd.Wait()
	p.closeLog()
	close(p.done)
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
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

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it. An exit caused by the signal is not an error.
func (p *Process) Stop(grace time.Duration) error {
	if done, err := p.Exited(); done {
		return exitError(p.Name, err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", p.Name, grace)
	}
}

// Kill kills the process at once and waits for it to exit.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

func exitError(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%s had already exited: %w", name, err)
	}
	return nil
}
