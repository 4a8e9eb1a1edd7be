// Command kube2sky writes the DNS records of a Kubernetes cluster's Services
// into etcd, where skydns (or CoreDNS's etcd plugin) serves them: flags and
// environment into a kube2sky.Config, then kube2sky.Run until SIGTERM or
// SIGINT. Every flag can also be set through a KUBE2SKY_* environment
// variable (--etcd-* also through ETCD_*). See docs/kube2sky.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/kube2sky"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 after a clean stop, 1 after a failure, 2
// for a bad flag or environment value.
func run(args []string, stdout, stderr io.Writer) int {
	cfg := kube2sky.DefaultConfig()
	fs := newFlagSet(&cfg)
	showVersion := fs.Bool("version", false, "print the version and exit")
	err := cfg.Parse(fs, args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "Usage: kube2sky [flags]\n\nWrites the DNS records of the cluster's Services into etcd.\n"+
			"Every flag can also be set as KUBE2SKY_<FLAG> (--etcd-* also as ETCD_<FLAG>).\n\nFlags:\n%s", fs.FlagUsages())
		return 0
	case *showVersion:
		fmt.Fprintln(stdout, "kube2sky", version.Version)
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "kube2sky:", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 2
	}
	log := cfg.NewLogger(stderr)
	log.Info("kube2sky", "version", version.Version, "revision", version.Revision())
	klog.SetSlogLogger(log.With("component", "client-go"))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := kube2sky.Run(ctx, cfg, log); err != nil {
		log.Error("kube2sky failed", "err", err)
		return 1
	}
	log.Info("kube2sky stopped")
	return 0
}

// newFlagSet returns kube2sky's flags bound to cfg; errors are returned,
// not printed.
func newFlagSet(cfg *kube2sky.Config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kube2sky", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.AddFlags(fs)
	return fs
}
