// Command skydns answers DNS for Kubernetes from SkyDNS records in etcd:
// flags and environment into a skydns.Config, then skydns.Run until
// SIGTERM (after the lameduck) or SIGINT (at once). See docs/skydns.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/skydns"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 after a clean shutdown, 1 after a
// failure, 2 for a bad flag or environment value. `skydns dnssec ...`
// makes keys and prints DS records (runDNSSEC); `skydns probe` asks a
// running skydns's health socket (runProbe); `skydns relay` is the
// read-only fan-out tier between etcd and the node-local skydns (runRelay).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "dnssec" {
		return runDNSSEC(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "probe" {
		return runProbe(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "relay" {
		return runRelay(args[1:], stdout, stderr)
	}
	cfg := skydns.DefaultConfig()
	fs := pflag.NewFlagSet("skydns", pflag.ContinueOnError)
	fs.Usage = func() {}
	cfg.AddFlags(fs)
	showVersion := fs.Bool("version", false, "print the version and exit")
	err := cfg.Parse(fs, args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "Usage: skydns [flags]\n       skydns dnssec keygen|ds [flags]\n       skydns probe [--socket PATH] [--path /readyz]\n       skydns relay [flags]\n\nEvery flag can also be set as SKYDNS_<FLAG> (--dns-addr: SKYDNS_DNS_ADDR);\nthe --etcd-* flags also read ETCD_<FLAG>.\n\n%s", fs.FlagUsages())
		return 0
	case *showVersion:
		fmt.Fprintln(stdout, "skydns", version.Version)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "skydns: %v\n", err)
		return 2
	}
	logger, err := skydns.NewLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		fmt.Fprintf(stderr, "skydns: %v\n", err)
		return 2
	}
	logger.Info("skydns", "version", version.Version, "revision", version.Revision())
	cfg.QueryLog = skydns.NewQueryLogger(stderr, cfg.LogFormat)
	ctx, stop := stopOnSignal()
	defer stop()
	if err := skydns.Run(ctx, cfg, logger); err != nil {
		logger.Error("skydns failed", "err", err)
		return 1
	}
	return 0
}

// stopOnSignal returns a context canceled by the first SIGTERM or SIGINT,
// with skydns.ErrInterrupted as the cause for SIGINT (Ctrl-C in a
// terminal, where no Service drains the process, so no lameduck). A second
// signal kills the process at once.
func stopOnSignal() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig, ok := <-sigs
		signal.Stop(sigs)
		if ok {
			cancel(signalCause(sig))
		}
	}()
	return ctx, func() { signal.Stop(sigs); close(sigs); cancel(nil) }
}

// signalCause is the cause Run's context is canceled with on sig.
func signalCause(sig os.Signal) error {
	if sig == syscall.SIGINT {
		return fmt.Errorf("%w: SIGINT", skydns.ErrInterrupted)
	}
	return fmt.Errorf("signal %v", sig)
}
