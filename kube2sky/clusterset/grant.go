package clusterset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
)

// ReaderUser is the etcd user and role of every skydns: read on the
// clusterset prefix, nothing else.
const ReaderUser = "clusterset-reader"

// ClusterUser is the etcd user and role of cluster id's kube2sky.
func ClusterUser(id string) string { return "kube2sky-" + id }

// Grant creates, in the etcd c reaches (as root), the roles and users of
// a clusterset under prefix: for each cluster ID a user ClusterUser(id)
// whose role may write that cluster's keys (cs.ClusterWriteRanges) and
// read the prefix, and ReaderUser, who may read the prefix. Users get no
// password: they authenticate with a client certificate naming them. A
// role's permissions end up exactly these, whatever it held before; what
// is already there is left alone, so Grant may run again. With enableAuth
// it also adds user root (role root, no password) if missing and turns
// auth on if it is off.
func Grant(ctx context.Context, c *clientv3.Client, prefix string, clusterIDs []string, enableAuth bool) error {
	return grant(ctx, c, prefix, clusterIDs, enableAuth, func(string) {})
}

// grant is Grant, telling did about each change it makes.
func grant(ctx context.Context, c *clientv3.Client, prefix string, clusterIDs []string, enableAuth bool, did func(string)) error {
	if err := checkGrant(prefix, clusterIDs); err != nil {
		return err
	}
	a := &access{c: c, did: did}
	for _, r := range roles(prefix, clusterIDs) {
		if err := a.ensureRole(ctx, r); err != nil {
			return err
		}
		if err := a.ensureUser(ctx, r.name, r.name); err != nil {
			return err
		}
	}
	if !enableAuth {
		return nil
	}
	if err := a.ensureUser(ctx, "root", "root"); err != nil {
		return err
	}
	return a.ensureAuth(ctx)
}

// checkGrant names the flag of a prefix or cluster ID Grant cannot use.
func checkGrant(prefix string, clusterIDs []string) error {
	var errs []error
	if !strings.HasPrefix(prefix, "/") || strings.Trim(prefix, "/") == "" {
		errs = append(errs, fmt.Errorf("--prefix: %q must be an etcd path like /clusterset", prefix))
	}
	for _, id := range clusterIDs {
		if !cs.ValidClusterID(id) {
			errs = append(errs, fmt.Errorf("--cluster-id: %q is not a lower-case DNS label", id))
		}
	}
	return errors.Join(errs...)
}

// role is an etcd role and the permissions it must hold.
type role struct {
	name  string
	perms []permission
}

type permission struct {
	cs.KeyRange
	kind authpb.Permission_Type
}

func (p permission) String() string {
	kind := strings.ToLower(p.kind.String())
	if p.End == "" {
		return kind + " " + p.Key
	}
	return fmt.Sprintf("%s [%s, %s)", kind, p.Key, p.End)
}

// roles are the reader's and each cluster's. Reading the prefix reaches
// up to where its watches may (etcdstore.PrefixPermissions).
func roles(prefix string, clusterIDs []string) []role {
	watched := etcdstore.PrefixPermissions(cs.ReadRange(prefix).Key, clientv3.PermissionType(clientv3.PermRead))[0]
	read := permission{cs.KeyRange{Key: watched.Key, End: watched.End}, clientv3.PermRead}
	all := []role{{name: ReaderUser, perms: []permission{read}}}
	for _, id := range clusterIDs {
		r := role{name: ClusterUser(id), perms: []permission{read}}
		for _, w := range cs.ClusterWriteRanges(prefix, id) {
			r.perms = append(r.perms, permission{w, clientv3.PermReadWrite})
		}
		all = append(all, r)
	}
	return all
}

// access makes the changes, with a deadline-bound context each.
type access struct {
	c   *clientv3.Client
	did func(string)
}

// ensureRole adds r if missing, grants each of its permissions and
// revokes any other the role holds.
func (a *access) ensureRole(ctx context.Context, r role) error {
	if _, err := a.c.RoleAdd(ctx, r.name); err == nil {
		a.did("added role " + r.name)
	} else if !errors.Is(err, rpctypes.ErrRoleAlreadyExist) {
		return fmt.Errorf("adding role %s: %w", r.name, err)
	}
	held, err := a.c.RoleGet(ctx, r.name)
	if err != nil {
		return fmt.Errorf("reading role %s: %w", r.name, err)
	}
	for _, p := range r.perms {
		if heldAs(held.Perm, p.KeyRange) == p.kind {
			continue
		}
		if _, err := a.c.RoleGrantPermission(ctx, r.name, p.Key, p.End, clientv3.PermissionType(p.kind)); err != nil {
			return fmt.Errorf("granting role %s %s: %w", r.name, p, err)
		}
		a.did(fmt.Sprintf("granted role %s %s", r.name, p))
	}
	for _, h := range held.Perm {
		k := cs.KeyRange{Key: string(h.Key), End: string(h.RangeEnd)}
		if slices.ContainsFunc(r.perms, func(p permission) bool { return p.KeyRange == k }) {
			continue
		}
		if _, err := a.c.RoleRevokePermission(ctx, r.name, k.Key, k.End); err != nil {
			return fmt.Errorf("revoking from role %s [%s, %s): %w", r.name, k.Key, k.End, err)
		}
		a.did(fmt.Sprintf("revoked from role %s [%q, %q), which it is not to hold", r.name, k.Key, k.End))
	}
	return nil
}

// heldAs is the type of the permission on exactly k, or -1.
func heldAs(perms []*authpb.Permission, k cs.KeyRange) authpb.Permission_Type {
	for _, p := range perms {
		if string(p.Key) == k.Key && string(p.RangeEnd) == k.End {
			return p.PermType
		}
	}
	return -1
}

// ensureUser adds user, without a password, if missing, and grants it
// role if it lacks it.
func (a *access) ensureUser(ctx context.Context, user, role string) error {
	got, err := a.c.UserGet(ctx, user)
	switch {
	case errors.Is(err, rpctypes.ErrUserNotFound):
		if _, err := a.c.UserAddWithOptions(ctx, user, "", &clientv3.UserAddOptions{NoPassword: true}); err != nil {
			return fmt.Errorf("adding user %s: %w", user, err)
		}
		a.did("added user " + user + " (no password: it authenticates with a client certificate)")
	case err != nil:
		return fmt.Errorf("reading user %s: %w", user, err)
	case slices.Contains(got.Roles, role):
		return nil
	}
	if _, err := a.c.UserGrantRole(ctx, user, role); err != nil {
		return fmt.Errorf("granting user %s role %s: %w", user, role, err)
	}
	a.did("granted user " + user + " role " + role)
	return nil
}

// ensureAuth turns etcd's auth on if it is off.
func (a *access) ensureAuth(ctx context.Context) error {
	status, err := a.c.AuthStatus(ctx)
	if err != nil {
		return fmt.Errorf("reading the auth status: %w", err)
	}
	if status.Enabled {
		return nil
	}
	if _, err := a.c.AuthEnable(ctx); err != nil {
		return fmt.Errorf("enabling auth: %w", err)
	}
	a.did("enabled auth")
	return nil
}
