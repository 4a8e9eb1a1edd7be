package corefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Exit statuses of Check.
const (
	exitUsable  = 0
	exitRefused = 1 // refused, or not a Corefile, or unreadable
	exitBadArgs = 2
)

const usage = `Usage: %[1]s corefile check FILE [flags]

Reads a CoreDNS Corefile (FILE, or - for standard input) and prints, line by
line, what kubesky does with each directive and option (used), what it
ignores and why, and what it refuses; then the skydns and kube2sky flags that
do the same. The exit status is 0 when kubesky can use the Corefile as it is,
1 when it refuses it (or it does not parse), 2 for bad arguments.

Flags:
%[2]s`

// Check runs `corefile check FILE` (args after "corefile") and returns its
// exit status. prog is the command as users type it.
func Check(prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts := DefaultOptions()
	fs := pflag.NewFlagSet(prog+" corefile check", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.ClusterZone, "cluster-zone", opts.ClusterZone, "the cluster domain, when no kubernetes plugin names one (NodeLocal DNSCache's Corefile)")
	fs.StringVar(&opts.HostsConfigMap, "hosts-configmap", opts.HostsConfigMap, "namespace/name of the ConfigMap to hold the hosts plugins' inline entries, for kube2sky --hosts-configmap")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, usage, prog, fs.FlagUsages())
		return exitUsable
	case err != nil:
		return failed(stderr, prog, exitBadArgs, err)
	case fs.NArg() != 2 || fs.Arg(0) != "check":
		return failed(stderr, prog, exitBadArgs, errors.New("want corefile check FILE (--help for more)"))
	}
	name := fs.Arg(1)
	text, err := readInput(name, stdin)
	if err != nil {
		return failed(stderr, prog, exitRefused, err)
	}
	plan, err := Read(name, text, opts)
	if err != nil {
		return failed(stderr, prog, exitRefused, err)
	}
	if err := plan.Write(stdout); err != nil {
		return failed(stderr, prog, exitRefused, err)
	}
	if plan.Err() != nil {
		return exitRefused
	}
	return exitUsable
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

func failed(stderr io.Writer, prog string, status int, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", prog, strings.ReplaceAll(err.Error(), "\n", "; "))
	return status
}
