// Command skydns-holder keeps a node-local skydns's UDP sockets open and
// answered while that skydns is down (see package skydns/sockhold): it
// holds copies of them and, while no skydns runs, forwards the queries they
// receive to the kube-dns Service. It holds no zone and no key.
//
//	skydns-holder --dir /run/skydns-peers --upstream 10.96.0.10:53
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/exepages"
	"github.com/kubesky/kubesky/skydns/sockhold"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := pflag.NewFlagSet("skydns-holder", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the directory shared with skydns (its --node-local-peers)")
	upstream := fs.String("upstream", "", "where queries go while no skydns runs, ip:port (the kube-dns Service)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "skydns-holder:", err)
		return 2
	}
	up, err := netip.ParseAddrPort(*upstream)
	if *dir == "" || err != nil || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "skydns-holder: want --dir DIR and --upstream IP:PORT, no arguments (--upstream %q)\n", *upstream)
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil)).With("component", "skydns-holder")
	h, err := sockhold.Start(sockhold.Config{Dir: *dir, Upstream: up, Logger: logger})
	if err != nil {
		logger.Error("not holding sockets", "err", err)
		return 1
	}
	logger.Info("holding the skydns sockets of a directory", "dir", *dir, "upstream", up)
	// Starting mapped most of the binary; holding and forwarding run a
	// small part of it (see exepages).
	if _, err := exepages.Drop(); err != nil {
		logger.Warn("could not give back the binary's resident pages", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
	err = h.Close()
	logger.Info("stopped", "forwarded", h.Forwarded(), "err", err)
	return 0
}
