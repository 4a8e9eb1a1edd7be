package harness

import (
	"context"
	"crypto/rand"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kubesky/kubesky/etcdstore"
)

// EtcdUser is a user EnableAuth adds, with a role of its name granted
// Perm on the prefix and read as far as a watch of it reaches
// (etcdstore.PrefixPermissions), as kubesky-demo etcd-auth grants.
type EtcdUser struct {
	Name string
	Perm clientv3.PermissionType
}

// EnableAuth turns the cluster's auth on with a root user and users, each
// with a random password, which it returns by name. From then on Client
// is root's: the harness may still do anything.
func (c *EtcdCluster) EnableAuth(prefix string, users ...EtcdUser) map[string]string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := c.Client()
	passwords := map[string]string{"root": rand.Text()}
	steps := []func() error{
		func() error { _, err := admin.UserAdd(ctx, "root", passwords["root"]); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
	}
	for _, u := range users {
		passwords[u.Name] = rand.Text()
		steps = append(steps,
			func() error { _, err := admin.RoleAdd(ctx, u.Name); return err },
			func() error {
				for _, p := range etcdstore.PrefixPermissions(prefix, u.Perm) {
					if _, err := admin.RoleGrantPermission(ctx, u.Name, p.Key, p.End, p.Type); err != nil {
						return err
					}
				}
				return nil
			},
			func() error { _, err := admin.UserAdd(ctx, u.Name, passwords[u.Name]); return err },
			func() error { _, err := admin.UserGrantRole(ctx, u.Name, u.Name); return err },
		)
	}
	steps = append(steps, func() error { _, err := admin.AuthEnable(ctx); return err })
	for _, step := range steps {
		if err := step(); err != nil {
			c.t.Fatalf("enabling etcd auth: %v", err)
		}
	}
	c.client = c.newClient("root", passwords["root"])
	return passwords
}

// newClient is a client of every member as user (none: without auth),
// closed when the test ends.
func (c *EtcdCluster) newClient(user, password string) *clientv3.Client {
	c.t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		Username: user, Password: password})
	if err != nil {
		c.t.Fatalf("etcd cluster client: %v", err)
	}
	c.t.Cleanup(func() { client.Close() })
	return client
}
