package clusterset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/flagenv"
)

// Exit statuses of GrantMain.
const (
	exitOK      = 0
	exitFailed  = 1 // etcd refused or could not be reached
	exitBadArgs = 2
)

const grantUsage = `Usage: %[1]s clusterset grant --cluster-id=ID [--cluster-id=ID ...] [flags]

Creates, in the clusterset's etcd (reached as root with the --etcd-* flags),
the users and roles of the clusterset under --prefix: for each cluster ID a
user kube2sky-<ID> that may write that cluster's keys (its clusters/ key,
its exports and its imports) and read the prefix, and the user %[3]s
that may only read the prefix (every skydns). The users have no password:
each authenticates with a client certificate whose common name is its user
name. Running it again changes nothing; a role holding other permissions
loses them. With --enable-auth it also adds user root (role root, no
password) if missing and turns auth on.

Every flag can also be set as %[4]s_<FLAG> (--etcd-* also as ETCD_<FLAG>).

Flags:
%[2]s`

// GrantMain runs `clusterset grant` (args after "clusterset") and returns
// its exit status. prog is the command as users type it; envPrefix the
// prefix of the environment variables its flags fall back to.
func GrantMain(prog, envPrefix string, args []string, stdout, stderr io.Writer) int {
	etcd := etcdstore.DefaultClientOptions()
	prefix, clusterIDs, enableAuth := cs.DefaultPrefix, []string(nil), false
	fs := pflag.NewFlagSet(prog+" clusterset grant", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	etcd.AddFlags(fs)
	fs.StringVar(&prefix, "prefix", prefix, "etcd key prefix of the clusterset, as kube2sky's and skydns's --clusterset-prefix")
	fs.StringArrayVar(&clusterIDs, "cluster-id", nil, "a cluster's ID, as its kube2sky's --cluster-id; repeat for each")
	fs.BoolVar(&enableAuth, "enable-auth", false, "also add user root (role root, no password) if missing and turn auth on if it is off")
	err := parseGrant(fs, envPrefix, args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, grantUsage, prog, fs.FlagUsages(), ReaderUser, envPrefix)
		return exitOK
	case err == nil:
		err = errors.Join(etcd.Validate(), requireEndpoints(etcd), checkGrant(prefix, clusterIDs))
	}
	if err != nil {
		return failGrant(stderr, prog, exitBadArgs, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := grantWith(ctx, etcd, prefix, clusterIDs, enableAuth, stdout); err != nil {
		return failGrant(stderr, prog, exitFailed, err)
	}
	return exitOK
}

// parseGrant parses args (after "clusterset"), which must start with
// "grant", fills the flags from the environment and validates etcd's.
func parseGrant(fs *pflag.FlagSet, envPrefix string, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "grant" {
		return errors.New("want clusterset grant --cluster-id=ID ... (--help for more)")
	}
	return flagenv.Apply(fs, envPrefix)
}

func requireEndpoints(etcd etcdstore.ClientOptions) error {
	if len(etcd.Endpoints) == 0 {
		return errors.New("--etcd-endpoints: required (the clusterset's etcd)")
	}
	return nil
}

// grantWith connects with opts (valid) and grants, printing each change, or that
// there was none.
func grantWith(ctx context.Context, opts etcdstore.ClientOptions, prefix string, clusterIDs []string, enableAuth bool, stdout io.Writer) error {
	c, err := opts.New(zap.NewNop())
	if err != nil {
		return err
	}
	defer c.Close()
	// a few requests per role and user, each given the request timeout
	ctx, cancel := context.WithTimeout(ctx, time.Duration(6*(len(clusterIDs)+2))*opts.RequestTimeout)
	defer cancel()
	changes := 0
	err = grant(ctx, c, prefix, clusterIDs, enableAuth, func(change string) {
		changes++
		fmt.Fprintln(stdout, change)
	})
	if err == nil && changes == 0 {
		fmt.Fprintln(stdout, "nothing to change: every user, role and permission is in place")
	}
	return err
}

func failGrant(stderr io.Writer, prog string, status int, err error) int {
	fmt.Fprintf(stderr, "%s clusterset grant: %s\n", prog, strings.ReplaceAll(err.Error(), "\n", "; "))
	return status
}
