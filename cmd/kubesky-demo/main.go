// Command kubesky-demo runs kubesky's whole pipeline on one machine, with
// nothing but the binaries in bin/: skydns with its embedded etcd, an etcd
// and a kube-apiserver, and kube2sky between them. It loads the example
// Services of deploy/examples, shows the records in etcd and the DNS
// answers, and keeps everything up until Ctrl-C (`make demo`).
//
// Its other subcommands are the building blocks the docker-compose demo
// uses, each usable on its own:
//
//	kubesky-demo run                  the one-machine demo (the default)
//	kubesky-demo pki --dir D ...      write certificates, an admin token and kubeconfigs for a kube-apiserver
//	kubesky-demo etcd-auth ...        create etcd's roles and users, enable auth
//	kubesky-demo apply --kubeconfig K apply the examples (or -f files) with server-side apply
//	kubesky-demo show                 print the records in etcd and dig-style answers
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// usage is printed for help and for an unknown subcommand.
const usage = `Usage: kubesky-demo [command] [flags]

Commands:
  run        start skydns, etcd, kube-apiserver and kube2sky, load the examples, show the
             records and answers, and stay up until Ctrl-C (the default)
  pki        write the certificates, admin token and kubeconfigs a kube-apiserver needs
             (and, with --etcd-member, an etcd cluster's TLS certificates; with --etcd-only,
             those alone, as deploy/shared-etcd's Secret holds them)
  etcd-auth  create the etcd roles and users of deploy/README.md and enable auth
  apply      apply the example Services (or -f files) to an API server, server-side
  show       print the records in etcd and dig-style answers from skydns

"kubesky-demo <command> --help" lists a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(dispatch(ctx, stop, os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand: it returns the exit status.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"run":       runCommand,
	"pki":       pkiCommand,
	"etcd-auth": etcdAuthCommand,
	"apply":     applyCommand,
	"show":      showCommand,
}

// dispatch runs the subcommand args name (run when args start with a flag
// or are empty). stop restores the default signal handling, so that a
// second Ctrl-C kills at once.
func dispatch(ctx context.Context, stop context.CancelFunc, args []string, stdout, stderr io.Writer) int {
	name := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "kubesky-demo: unknown command %q\n\n%s", name, usage)
		return 2
	}
	go func() { <-ctx.Done(); stop() }()
	return cmd(ctx, args, stdout, stderr)
}
