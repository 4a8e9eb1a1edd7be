package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/poll"
)

// etcdAccount is an etcd user and the role of the same name it holds (root
// holds etcd's built-in root role). Every user authenticates with the
// common name of its client certificate and has no password.
type etcdAccount struct {
	user   string
	grants []etcdGrant
}

// etcdGrant is a permission on the keys in [key, end), or on key alone
// if end is empty.
type etcdGrant struct {
	key, end string
	perm     clientv3.PermissionType
}

var (
	permRead      = clientv3.PermissionType(clientv3.PermRead)
	permReadWrite = clientv3.PermissionType(clientv3.PermReadWrite)
)

// etcdAccounts are the users of the docker-compose HA stack, least
// privilege each (deploy/README.md has them as a table): kube2sky reads
// and writes the records' prefix, which holds its leader election key too
// (<prefix>/_kube2sky/leader/); skydns only reads it; the demo's
// kube-apiserver, which shares the cluster, gets its /registry/ prefix and
// the key its compactor keeps; root sets the rest up.
func etcdAccounts(prefix string) []etcdAccount {
	return accountsFor(prefix, "", []string{"skydns"}, true)
}

// accountsFor are root, kube2sky (read and write on the records' prefix
// and, if not empty, the clusterset prefix), a user per reader (read on
// them) and, with apiserver, the kube-apiserver's. A cluster's shared etcd
// has one reader, the relay (deploy/README.md). Each reads its prefixes as
// far as a watch of them reaches (see watchedGrants).
func accountsFor(prefix, clusterset string, readers []string, apiserver bool) []etcdAccount {
	prefixes := []string{prefix}
	if clusterset != "" {
		prefixes = append(prefixes, clusterset)
	}
	accounts := []etcdAccount{{user: "root"}, {user: "kube2sky", grants: prefixGrants(prefixes, permReadWrite)}}
	for _, r := range readers {
		accounts = append(accounts, etcdAccount{user: r, grants: prefixGrants(prefixes, permRead)})
	}
	if apiserver {
		accounts = append(accounts, etcdAccount{user: "kube-apiserver", grants: []etcdGrant{
			{"/registry/", clientv3.GetPrefixRangeEnd("/registry/"), permReadWrite}, {"compact_rev_key", "", permReadWrite}}})
	}
	return accounts
}

// prefixGrants grant perm on every key under each of prefixes (see
// watchedGrants).
func prefixGrants(prefixes []string, perm clientv3.PermissionType) []etcdGrant {
	var grants []etcdGrant
	for _, p := range prefixes {
		grants = append(grants, watchedGrants(strings.TrimSuffix(p, "/")+"/", perm)...)
	}
	return grants
}

// watchedGrants grant perm on every key under prefix, and read as far as
// a watch of it reaches (etcdstore.PrefixPermissions).
func watchedGrants(prefix string, perm clientv3.PermissionType) []etcdGrant {
	var grants []etcdGrant
	for _, p := range etcdstore.PrefixPermissions(prefix, perm) {
		grants = append(grants, etcdGrant{p.Key, p.End, p.Type})
	}
	return grants
}

// etcdUsers are the names of etcdAccounts.
func etcdUsers() []string {
	var users []string
	for _, a := range etcdAccounts("") {
		users = append(users, a.user)
	}
	return users
}

func etcdAuthCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts := etcdstore.DefaultClientOptions()
	prefix, clustersetPrefix := contract.DefaultPrefix, ""
	readers, apiserver := []string{"skydns"}, true
	wait := time.Duration(0)
	fs := pflag.NewFlagSet("etcd-auth", pflag.ContinueOnError)
	opts.AddFlags(fs)
	fs.StringVar(&prefix, "prefix", prefix, "etcd key prefix of the records")
	fs.StringVar(&clustersetPrefix, "clusterset-prefix", clustersetPrefix, "etcd key prefix of the Multi-Cluster Services records kept in this etcd: kube2sky may write it and the readers read it, as the records (empty: none)")
	fs.StringSliceVar(&readers, "reader", readers, "user that may read the prefix and nothing else, repeatable")
	fs.BoolVar(&apiserver, "kube-apiserver", apiserver, "also the kube-apiserver's user (the compose stack's API server shares the etcd)")
	fs.DurationVar(&wait, "wait", wait, "how long to wait for etcd to answer before giving up (a Job started with the members)")
	summary := "Creates the etcd roles and users of deploy/README.md (root, kube2sky, the readers,\n" +
		"kube-apiserver; each authenticates with its client certificate's common name) and\n" +
		"enables authentication. Connect as root: --etcd-certfile is root's certificate.\n" +
		"What exists already is kept, so running it again is safe."
	if code, exit := parseFlags(fs, args, summary, stdout, stderr); exit {
		return code
	}
	if err := validateEtcdAuth(opts, prefix, clustersetPrefix); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo etcd-auth: %v\n", err)
		return 2
	}
	if err := setUpEtcdAuth(ctx, opts, accountsFor(prefix, clustersetPrefix, readers, apiserver), wait, stdout); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo etcd-auth: %v\n", err)
		return 1
	}
	return 0
}

// validateEtcdAuth checks the flags; clusterset is --clusterset-prefix,
// empty if not given.
func validateEtcdAuth(opts etcdstore.ClientOptions, prefix, clusterset string) error {
	switch {
	case len(opts.Endpoints) == 0:
		return errors.New("--etcd-endpoints is required")
	case !absolutePrefix(prefix):
		return fmt.Errorf("--prefix %q: want an absolute key prefix such as /skydns", prefix)
	case clusterset == "":
	case !absolutePrefix(clusterset):
		return fmt.Errorf("--clusterset-prefix %q: want an absolute key prefix such as /clusterset", clusterset)
	case cs.Overlaps(clusterset, prefix):
		return fmt.Errorf("--clusterset-prefix %q overlaps --prefix %q", clusterset, prefix)
	}
	return opts.Validate()
}

func absolutePrefix(p string) bool { return strings.HasPrefix(p, "/") && strings.Trim(p, "/") != "" }

// setUpEtcdAuth waits up to wait for etcd, creates the roles, then the
// users, then enables auth.
func setUpEtcdAuth(ctx context.Context, opts etcdstore.ClientOptions, accounts []etcdAccount, wait time.Duration, stdout io.Writer) error {
	client, err := opts.New(nil)
	if err != nil {
		return err
	}
	defer client.Close()
	a := etcdAuthSetup{client: client, opts: opts}
	if err := a.await(ctx, wait); err != nil {
		return err
	}
	for _, acct := range accounts {
		if err := a.account(ctx, acct); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "etcd user %s: %s\n", acct.user, describeGrants(acct))
	}
	if err := a.call(ctx, "enabling auth", func(ctx context.Context) error {
		_, err := client.AuthEnable(ctx)
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "etcd auth enabled")
	return nil
}

// etcdAuthSetup makes the Auth API calls, each under the request timeout.
type etcdAuthSetup struct {
	client *clientv3.Client
	opts   etcdstore.ClientOptions
}

// account creates acct's role (but root's) with its grants and the user
// holding it; a role or user that exists is kept.
func (a etcdAuthSetup) account(ctx context.Context, acct etcdAccount) error {
	role := acct.user
	if role != "root" {
		if err := a.call(ctx, "adding role "+role, func(ctx context.Context) error {
			_, err := a.client.RoleAdd(ctx, role)
			return ignoreExists(err)
		}); err != nil {
			return err
		}
	}
	for _, g := range acct.grants {
		if err := a.call(ctx, "granting role "+role+" "+g.String(), func(ctx context.Context) error {
			_, err := a.client.RoleGrantPermission(ctx, role, g.key, g.end, g.perm)
			return err
		}); err != nil {
			return err
		}
	}
	return a.call(ctx, "adding user "+acct.user, func(ctx context.Context) error {
		_, err := a.client.UserAddWithOptions(ctx, acct.user, "", &clientv3.UserAddOptions{NoPassword: true})
		if err = ignoreExists(err); err != nil {
			return err
		}
		_, err = a.client.UserGrantRole(ctx, acct.user, role)
		return err
	})
}

// await polls etcd for up to wait until a member answers a user list
// (root's, or anyone's while auth is off).
func (a etcdAuthSetup) await(ctx context.Context, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	return poll.Until(ctx, wait, func(ctx context.Context) error {
		err := a.call(ctx, "waiting for etcd", func(ctx context.Context) error {
			_, err := a.client.UserList(ctx)
			return err
		})
		if errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrUserEmpty) {
			return poll.Permanent(err)
		}
		return err
	})
}

func (a etcdAuthSetup) call(ctx context.Context, what string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.RequestTimeout)
	defer cancel()
	err := f(ctx)
	if errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrUserEmpty) {
		return fmt.Errorf("%s: %w (auth is on: --etcd-certfile must be root's client certificate)", what, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func ignoreExists(err error) error {
	if errors.Is(err, rpctypes.ErrRoleAlreadyExist) || errors.Is(err, rpctypes.ErrUserAlreadyExist) {
		return nil
	}
	return err
}

// describeGrants is "role root" or the role and its grants, like
// "role kube-apiserver (readwrite /registry/*, readwrite compact_rev_key)".
func describeGrants(acct etcdAccount) string {
	if acct.user == "root" {
		return "role root"
	}
	var parts []string
	for _, g := range acct.grants {
		parts = append(parts, g.String())
	}
	return "role " + acct.user + " (" + strings.Join(parts, ", ") + ")"
}

// String is "read key", "readwrite /prefix/*" or "read [key, end)" with
// the keys quoted.
func (g etcdGrant) String() string {
	switch g.end {
	case "":
		return permName(g.perm) + " " + g.key
	case clientv3.GetPrefixRangeEnd(g.key):
		return permName(g.perm) + " " + g.key + "*"
	}
	return fmt.Sprintf("%s [%q, %q)", permName(g.perm), g.key, g.end)
}

func permName(p clientv3.PermissionType) string {
	if p == permRead {
		return "read"
	}
	return "readwrite"
}
