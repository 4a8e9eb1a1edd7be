package corefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Exit statuses of Check.
const (
	exitUsable  = 0
	exitRefused = 1 // refused, or not a Corefile, or unreadable
	exitBadArgs = 2
)

const usage = `Usage: %[1]s corefile check FILE [flags]
       %[1]s corefile check --kubeconfig=PATH [--configmap=NAMESPACE/NAME]

Reads a CoreDNS Corefile (FILE, - for standard input, or the Corefile key of
the live ConfigMap, kube-system/coredns by default) and prints, line by
line, what kubesky does with each directive and option (used), what it
ignores and why, and what it refuses; then the skydns and kube2sky flags that
do the same. The exit status is 0 when kubesky can use the Corefile as it is,
1 when it refuses it (or it does not parse), 2 for bad arguments.

Flags:
%[2]s`

// ConfigMapReader returns the value of key in the ConfigMap namespace/name
// of the cluster a kubeconfig file reaches.
type ConfigMapReader func(ctx context.Context, kubeconfig, namespace, name, key string) (string, error)

// CorefileKey is the ConfigMap data key CoreDNS's Corefile is kept under.
const CorefileKey = "Corefile"

// Check runs `corefile check FILE` (args after "corefile") and returns its
// exit status. prog is the command as users type it; readConfigMap reads
// the live ConfigMap for --kubeconfig.
func Check(prog string, args []string, stdin io.Reader, stdout, stderr io.Writer, readConfigMap ConfigMapReader) int {
	opts := DefaultOptions()
	var kubeconfig, configMap string
	fs := pflag.NewFlagSet(prog+" corefile check", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.ClusterZone, "cluster-zone", opts.ClusterZone, "the cluster domain, when no kubernetes plugin names one (NodeLocal DNSCache's Corefile)")
	fs.StringVar(&opts.HostsConfigMap, "hosts-configmap", opts.HostsConfigMap, "namespace/name of the ConfigMap to hold the hosts plugins' inline entries, for kube2sky --hosts-configmap")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file: read the Corefile from the live ConfigMap --configmap instead of FILE")
	fs.StringVar(&configMap, "configmap", "kube-system/coredns", "namespace/name of the ConfigMap holding the Corefile (with --kubeconfig)")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, usage, prog, fs.FlagUsages())
		return exitUsable
	case err != nil:
		return failed(stderr, prog, exitBadArgs, err)
	case fs.Arg(0) != "check" || !(fs.NArg() == 2 && kubeconfig == "" || fs.NArg() == 1 && kubeconfig != ""):
		return failed(stderr, prog, exitBadArgs, errors.New("want corefile check FILE, or corefile check --kubeconfig=PATH (--help for more)"))
	case !validRef(configMap):
		return failed(stderr, prog, exitBadArgs, fmt.Errorf("--configmap %q: want namespace/name", configMap))
	}
	name, text, err := fs.Arg(1), []byte(nil), error(nil)
	switch name {
	case "":
		name = configMap
		text, err = liveCorefile(readConfigMap, kubeconfig, configMap)
		opts.ReadKey = liveKeys(readConfigMap, kubeconfig, configMap)
	case "-":
		text, err = io.ReadAll(stdin)
	default:
		text, err = os.ReadFile(name)
		opts.ReadKey = KeysIn(filepath.Dir(name)) // the ConfigMap's other keys as files beside it
	}
	if err != nil {
		return failed(stderr, prog, exitRefused, err)
	}
	restore := parserLogTo(stderr, prog)
	plan, err := Read(name, text, opts)
	restore()
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

// liveCorefile reads the Corefile key of the ConfigMap ref.
func liveCorefile(read ConfigMapReader, kubeconfig, ref string) ([]byte, error) {
	if read == nil {
		return nil, errors.New("--kubeconfig: no Kubernetes client in this command")
	}
	text, err := liveKeys(read, kubeconfig, ref)(CorefileKey)
	return []byte(text), err
}

// liveKeys returns an Options.ReadKey that reads the keys of the ConfigMap
// ref.
func liveKeys(read ConfigMapReader, kubeconfig, ref string) func(string) (string, error) {
	namespace, name, _ := strings.Cut(ref, "/")
	return func(key string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return read(ctx, kubeconfig, namespace, name, key)
	}
}

// validRef reports whether ref is namespace/name.
func validRef(ref string) bool {
	namespace, name, ok := strings.Cut(ref, "/")
	return ok && namespace != "" && name != "" && !strings.Contains(name, "/")
}

// parserLogTo sends what CoreDNS's parser logs (an import that matches no
// file) to stderr as the command's own lines, until the returned function
// restores the log.
func parserLogTo(stderr io.Writer, prog string) (restore func()) {
	out, prefix, flags := log.Writer(), log.Prefix(), log.Flags()
	log.SetOutput(stderr)
	log.SetPrefix(prog + ": ")
	log.SetFlags(0)
	return func() {
		log.SetOutput(out)
		log.SetPrefix(prefix)
		log.SetFlags(flags)
	}
}

func failed(stderr io.Writer, prog string, status int, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", prog, strings.ReplaceAll(err.Error(), "\n", "; "))
	return status
}
