// Command healthcheck probes one HTTP(S) URL and exits 0 when it answers
// 200 OK, 1 otherwise. It exists for container images built FROM scratch,
// which have no curl or wget for a HEALTHCHECK:
//
//	healthcheck http://127.0.0.1:8081/readyz
//	healthcheck --cacert /pki/ca.crt https://127.0.0.1:6443/readyz
//
// Exit status: 0 healthy, 1 unhealthy or unreachable, 2 bad arguments.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line.
type options struct {
	url      string
	caFile   string
	insecure bool
	timeout  time.Duration
	quiet    bool
}

const usage = "usage: healthcheck [--cacert FILE] [--insecure] [--timeout 2s] [--quiet] URL"

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "%s\n\nExits 0 when URL answers 200 OK, 1 otherwise, 2 for bad arguments.\n\nFlags:\n%s", usage, newFlagSet(&options{}).FlagUsages())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n%s\n", err, usage)
		return 2
	}
	body, err := probe(opts)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	if !opts.quiet {
		fmt.Fprintf(stdout, "%s\n", body)
	}
	return 0
}

func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("healthcheck", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.caFile, "cacert", "", "PEM CA bundle that verifies an https:// URL's certificate")
	fs.BoolVar(&o.insecure, "insecure", false, "accept any certificate (liveness only)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Second, "deadline of the whole request")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on success")
	return fs
}

func parse(args []string) (options, error) {
	var o options
	fs := newFlagSet(&o)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() != 1 {
		return o, fmt.Errorf("want exactly one URL, got %d arguments", fs.NArg())
	}
	if o.timeout <= 0 {
		return o, fmt.Errorf("--timeout must be positive, got %s", o.timeout)
	}
	o.url = fs.Arg(0)
	return o, nil
}
