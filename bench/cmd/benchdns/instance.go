package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubesky/kubesky/bench/callgrind"
	"github.com/kubesky/kubesky/bench/proc"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

// instance is a running server.
type instance struct {
	server
	proc     *kubeproc.Process
	addr     string // DNS host:port
	httpAddr string // skydns's /metrics host:port
	tlsAddr  string // DNS over TLS host:port; "" when not served
	log      string
}

// startOptions vary how startServer runs a server.
type startOptions struct {
	// cgOut runs the server under callgrind, dumping to cgOut.N.
	cgOut string
	// extra arguments are appended to the server's.
	extra []string
	// tlsAddr is where extra makes the server serve DNS over TLS.
	tlsAddr string
	// ready replaces the wait for an answer to the probe name.
	ready func(ctx context.Context, inst *instance, timeout time.Duration) error
}

// startServer starts s pinned to the server CPU and waits until it is
// ready: by default, until it answers the probe name.
func (b *bench) startServer(ctx context.Context, s server, o startOptions) (*instance, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	argv, err := s.argv(b, port, httpPort)
	if err != nil {
		return nil, err
	}
	argv = append(argv, o.extra...)
	var env []string
	timeout := time.Minute
	if o.cgOut != "" {
		if s.callgrindArgv != nil {
			argv = s.callgrindArgv(argv)
		}
		argv, timeout = callgrind.Command(o.cgOut, argv...), 5*time.Minute
		if s.goRuntime {
			env = callgrind.Env
		}
	}
	kind := ""
	if o.cgOut != "" {
		kind = ".callgrind"
	}
	log := filepath.Join(b.work, fmt.Sprintf("%s%s.%d.log", s.name, kind, port))
	p, err := b.startPinned(s.name, argv, env, log)
	if err != nil {
		return nil, err
	}
	inst := &instance{server: s, proc: p, addr: addr(port), httpAddr: addr(httpPort), tlsAddr: o.tlsAddr, log: log}
	if o.ready == nil {
		o.ready = b.answersProbe
	}
	if err := o.ready(ctx, inst, timeout); err != nil {
		p.Kill()
		return nil, fmt.Errorf("%w; log: %s", err, tail(log, 400))
	}
	return inst, nil
}

// startPinned starts argv pinned to the server CPU, its output in log.
func (b *bench) startPinned(name string, argv, env []string, log string) (*kubeproc.Process, error) {
	argv = proc.Pin(b.cfg.serverCPU, argv)
	return kubeproc.Start(kubeproc.Spec{Name: name, Path: argv[0], Args: argv[1:], Env: env, Log: log})
}

// stop stops the instance, killing it if SIGTERM is not enough.
func (i *instance) stop() {
	if err := i.proc.Stop(10 * time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "benchdns: %v\n", err)
	}
}

// tail returns the last n bytes of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// answersProbe waits until inst answers the probe name with an A record.
func (b *bench) answersProbe(ctx context.Context, inst *instance, timeout time.Duration) error {
	return poll(ctx, inst.proc, timeout, func() error { return answers(inst.addr, b.probe, 300*time.Millisecond) })
}

// poll calls check every 20ms until it succeeds, the process exits, or
// timeout passes.
func poll(ctx context.Context, p *kubeproc.Process, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if done, exitErr := p.Exited(); done {
			return fmt.Errorf("%s exited: %v (last check: %v)", p.Name, exitErr, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not ready after %s: %v", p.Name, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
