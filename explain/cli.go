package explain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/corefile"
	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/kube2sky/clusterset"
)

// Exit statuses of Main.
const (
	exitOK      = 0
	exitFailed  = 1 // etcd or the Kubernetes API could not be read
	exitBadArgs = 2 // a bad flag, name or type
)

const usage = `Usage: %[1]s explain NAME [TYPE] [flags]
       %[1]s corefile check FILE   (see %[1]s corefile --help)
       %[1]s clusterset grant --cluster-id=ID ...   (see %[1]s clusterset --help)

Says why NAME answers what it does: the etcd keys at and below its key with
their revisions and owner, the Kubernetes object each stands for and whether
kube2sky would write the same records for it now, and what each skydns
replica answers with the etcd revision it has applied. NAME may be an IP
address (its PTR name). TYPE defaults to A (PTR for a reverse name).

Example:
  %[1]s explain web.default.svc.cluster.local --etcd-endpoints=http://127.0.0.1:2379 \
      --dns=127.0.0.1:1053,http=127.0.0.1:8081 --kubeconfig=$HOME/.kube/config

Every flag can also be set as KUBESKY_<FLAG> (--etcd-* also as ETCD_<FLAG>).

Flags:
%[2]s`

// Main runs the command line and returns its exit status. prog is the
// command as users type it, for the usage and the messages: "kubesky", or
// "kubectl kubesky" for the kubectl plugin.
func Main(prog string, args []string, stdout, stderr io.Writer) int {
	opts := DefaultOptions()
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts.AddFlags(fs)
	showVersion := fs.Bool("version", false, "print the version and exit")
	if len(args) > 0 && args[0] == "corefile" {
		return corefile.Check(prog, args[1:], os.Stdin, stdout, stderr, readConfigMap)
	}
	if len(args) > 0 && args[0] == "clusterset" {
		return clusterset.GrantMain(prog, EnvPrefix, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "explain" {
		return topLevel(prog, fs, args, stdout, stderr, showVersion)
	}
	rest, err := opts.Parse(fs, args[1:])
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, usage, prog, fs.FlagUsages())
		return exitOK
	}
	if err != nil {
		return fail(stderr, prog, exitBadArgs, err)
	}
	q, err := ParseQuery(opts.Prefix, rest)
	if err != nil {
		return fail(stderr, prog, exitBadArgs, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return explainTo(ctx, opts, q, stdout, stderr, prog)
}

// topLevel handles everything but the explain subcommand: --help,
// --version, and a missing or unknown subcommand.
func topLevel(prog string, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer, showVersion *bool) int {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, usage, prog, fs.FlagUsages())
		return exitOK
	case err == nil && *showVersion:
		fmt.Fprintln(stdout, prog, version.Version)
		return exitOK
	case len(args) == 0:
		return fail(stderr, prog, exitBadArgs, errors.New("want a command: explain NAME [TYPE], corefile check FILE or clusterset grant (--help for more)"))
	}
	return fail(stderr, prog, exitBadArgs, fmt.Errorf("unknown command %q: want explain NAME [TYPE], corefile check FILE or clusterset grant (--help for more)", args[0]))
}

func explainTo(ctx context.Context, opts Options, q Query, stdout, stderr io.Writer, prog string) int {
	src, closeSrc, err := opts.Sources(ctx)
	if err != nil {
		return fail(stderr, prog, exitFailed, err)
	}
	defer closeSrc()
	rep, err := Explain(ctx, src, q)
	if err != nil {
		return fail(stderr, prog, exitFailed, fmt.Errorf("%w (--etcd-endpoints=%s)", err, strings.Join(opts.Etcd.Endpoints, ",")))
	}
	if err := rep.Write(stdout); err != nil {
		return fail(stderr, prog, exitFailed, err)
	}
	return exitOK
}

func fail(stderr io.Writer, prog string, status int, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", prog, strings.ReplaceAll(err.Error(), "\n", "; "))
	return status
}
