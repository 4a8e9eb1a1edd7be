//go:build !noembed

package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/skydns"
	"github.com/kubesky/kubesky/skydns/relay"
)

// runRelay is `skydns relay`: the read-only fan-out between etcd and the
// node-local skydns (package relay). A bad flag or credential file is
// exit status 2, a credential etcd refuses 1, each one line naming it.
func runRelay(args []string, stdout, stderr io.Writer) int {
	cfg := relay.DefaultConfig()
	fs := pflag.NewFlagSet("skydns relay", pflag.ContinueOnError)
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	cfg.AddFlags(fs)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "Usage: skydns relay [flags]\n\nServes etcd's KV (reads only) and Watch to the readers allowed by --allowed-cn,\nreading etcd as the user of --etcd-certfile.\n\n%s", fs.FlagUsages())
		return 0
	case err == nil:
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "skydns relay: %s\n", oneLine(err))
		return 2
	}
	logger, err := skydns.NewLogger(stderr, *logLevel, "text")
	if err != nil {
		fmt.Fprintf(stderr, "skydns relay: %v\n", err)
		return 2
	}
	ctx, stop := stopOnSignal()
	defer stop()
	if err := relay.Run(ctx, cfg, logger); err != nil {
		fmt.Fprintf(stderr, "skydns relay: %s\n", oneLine(err))
		return 1
	}
	return 0
}

// oneLine joins the lines of errors.Join's message.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
