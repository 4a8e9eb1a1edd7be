// Command kube2sky writes the DNS records of a Kubernetes cluster's Services
// into etcd, where skydns (or CoreDNS's etcd plugin) serves them. Every flag
// can also be set through a KUBE2SKY_* environment variable (--etcd-* also
// through ETCD_*).
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

	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/kube2sky"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its exit status: 0 on a clean stop, 1 on a failure, 2
// on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		usage(stdout)
		return 0
	}
	if errors.Is(err, errVersion) {
		fmt.Fprintln(stdout, "kube2sky", version.Version)
		return 0
	}
	if err != nil {
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

// errVersion is parse's answer to --version.
var errVersion = errors.New("version requested")

// parse reads the flags, then the environment, and validates the result.
func parse(args []string) (kube2sky.Config, error) {
	cfg := kube2sky.DefaultConfig()
	fs := newFlagSet(&cfg)
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if *showVersion {
		return cfg, errVersion
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q (every setting is a --flag)", fs.Arg(0))
	}
	if err := flagenv.Apply(fs, "KUBE2SKY"); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func newFlagSet(cfg *kube2sky.Config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kube2sky", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.AddFlags(fs)
	return fs
}

func usage(w io.Writer) {
	cfg := kube2sky.DefaultConfig()
	fs := newFlagSet(&cfg)
	fs.Bool("version", false, "print the version and exit")
	fmt.Fprintf(w, "Usage: kube2sky [flags]\n\nWrites the DNS records of the cluster's Services into etcd.\n"+
		"Every flag can also be set as KUBE2SKY_<FLAG> (--etcd-* also as ETCD_<FLAG>).\n\nFlags:\n%s", fs.FlagUsages())
}
