package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// explainTimeout bounds one run of kubesky explain, and how long a name
// takes to reach every replica.
const explainTimeout = time.Minute

// checkExplain runs bin/kubesky explain from the cluster's client namespace,
// against the shared etcd (with the Secret's client certificate) and the API
// server, finding the replicas as the kube-dns Service's endpoints, for each
// kind of name in testdata/workload.yaml, a PTR, a name that does not exist
// and a record added by hand with etcdctl. Every replica must have applied
// etcd's current revision.
func checkExplain(t *testing.T, c *cluster.Cluster) {
	workload, err := os.ReadFile("testdata/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, workload, "apply", "-f", "-")
	waitPodsReady(t, c, "web-0", "db-0")
	etcd := writeEtcdClient(t, c)
	const handKey = "/skydns/local/cluster/svc/default/hand/x1"
	inNetNS(t, c, etcd.etcdctl(c, "put", handKey, `{"host":"10.0.0.1"}`)...)
	web, err := c.Client.CoreV1().Services("default").Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	webIP := web.Spec.ClusterIP
	for _, name := range []struct {
		what string
		args []string
		want []string
	}{
		{"a ClusterIP Service", []string{"web.default.svc.cluster.local"},
			[]string{"Service default/web, resourceVersion " + web.ResourceVersion, "in sync: etcd holds the 2 records the builder gives",
				"web.default.svc.cluster.local. 30 IN A " + webIP}},
		{"a headless Service", []string{"db.default.svc.cluster.local"},
			[]string{"/skydns/local/cluster/svc/default/db/_tcp/_pg/db-0\n", "Service default/db, resourceVersion",
				"in sync: etcd holds the 2 records the builder gives"}},
		{"an ExternalName", []string{"docs.default.svc.cluster.local", "CNAME"},
			[]string{"Service default/docs, resourceVersion", "in sync: etcd holds the 1 record the builder gives",
				"docs.default.svc.cluster.local. 30 IN CNAME www.example.org."}},
		{"a PTR of a cluster IP", []string{webIP},
			[]string{"Service default/web, resourceVersion", "IN PTR web.default.svc.cluster.local."}},
		{"a name that does not exist", []string{"nope.default.svc.cluster.local"},
			[]string{"so the name does not exist", "NXDOMAIN, 0 records"}},
		{"a record added by hand with etcdctl", []string{"hand.default.svc.cluster.local"},
			[]string{"no owner: added by hand, kube2sky leaves it alone", "hand.default.svc.cluster.local. 30 IN A 10.0.0.1"}},
	} {
		t.Run(name.what, func(t *testing.T) {
			out := explainCurrent(t, c, append(name.args, etcd.explainFlags()...)...)
			for _, w := range name.want {
				if !strings.Contains(out, w) {
					t.Errorf("the report does not say %q", w)
				}
			}
		})
	}
	// the tests after this one make their own web
	inNetNS(t, c, etcd.etcdctl(c, "del", handKey)...)
	kubectl(t, c, workload, "delete", "--wait", "-f", "-")
}

// explainCurrent runs kubesky explain with args until every replica it
// lists (at least two) has applied etcd's current revision, and returns
// the report.
func explainCurrent(t *testing.T, c *cluster.Cluster, args ...string) string {
	t.Helper()
	var out string
	argv := append([]string{c.Cfg().BinDir + "/kubesky", "explain", "--kubeconfig=" + c.Cfg().Kubeconfig()}, args...)
	polltest.Within(t, explainTimeout, "kubesky explain "+args[0]+" with every replica current", func() error {
		var err error
		if out, err = runInNetNS(t.Context(), c, argv...); err != nil {
			return err
		}
		replicas, current := strings.Count(out, "applied revision"), strings.Count(out, "(current)")
		if replicas < 2 || current != replicas {
			return fmt.Errorf("%d replicas, %d current:\n%s", replicas, current, out)
		}
		return nil
	})
	t.Logf("kubesky explain %s:\n%s", args[0], out)
	return out
}

// etcdClient is where an etcd client certificate of the shared topology,
// from its identity's Secret, was written.
type etcdClient struct{ ca, cert, key string }

// writeEtcdClient writes the administrator's (root's) certificate, as an
// operator running kubesky explain or etcdctl holds it.
func writeEtcdClient(t *testing.T, c *cluster.Cluster) etcdClient {
	t.Helper()
	return writeEtcdSecret(t, c, "kubesky-etcd-admin")
}

// writeEtcdSecret writes the CA, certificate and key of an identity's
// Secret into a temp dir.
func writeEtcdSecret(t *testing.T, c *cluster.Cluster, name string) etcdClient {
	t.Helper()
	secret := etcdSecret(t, c, name)
	dir := t.TempDir()
	write := func(key string) string {
		path := filepath.Join(dir, key)
		if err := os.WriteFile(path, secret.Data[key], 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return etcdClient{ca: write("ca.crt"), cert: write("client.crt"), key: write("client.key")}
}

// etcdctl is the argv of etcdctl reaching the first member.
func (e etcdClient) etcdctl(c *cluster.Cluster, args ...string) []string {
	return append([]string{c.Cfg().BinDir + "/etcdctl", "--endpoints=" + etcdMember0,
		"--cacert=" + e.ca, "--cert=" + e.cert, "--key=" + e.key}, args...)
}

// explainFlags are kubesky explain's flags reaching the first member.
func (e etcdClient) explainFlags() []string {
	return []string{"--etcd-endpoints=" + etcdMember0, "--etcd-cafile=" + e.ca, "--etcd-certfile=" + e.cert, "--etcd-keyfile=" + e.key}
}

// inNetNS runs a command in the cluster's client namespace and fails the
// test if it fails.
func inNetNS(t *testing.T, c *cluster.Cluster, argv ...string) string {
	t.Helper()
	out, err := runInNetNS(t.Context(), c, argv...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runInNetNS runs a command in the cluster's client namespace and returns
// its standard output.
func runInNetNS(ctx context.Context, c *cluster.Cluster, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + cluster.NetNSPath(c.Cfg().ClientNetNS()), "--"}, argv...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, stderr.String())
	}
	return string(out), nil
}

// checkNameServer checks that the zone apex's NS is the kube-dns Service's
// address: kube2sky writes it as ns1.ns.dns.cluster.local.
func checkNameServer(t *testing.T, c *cluster.Cluster) {
	dnsIP := c.Cfg().Addresses().ClusterDNS
	polltest.Within(t, explainTimeout, "cluster.local. NS", func() error {
		reply, err := c.Exchange(t.Context(), net.JoinHostPort(dnsIP, "53"), "cluster.local.", dns.TypeNS)
		if err != nil {
			return err
		}
		if len(reply.Answer) != 1 || len(reply.Extra) < 1 {
			return fmt.Errorf("answer %v extra %v, want one NS and its address", reply.Answer, reply.Extra)
		}
		ns, ok := reply.Answer[0].(*dns.NS)
		a, okA := reply.Extra[0].(*dns.A)
		if !ok || !okA || ns.Ns != "ns1.ns.dns.cluster.local." || a.Hdr.Name != ns.Ns || a.A.String() != dnsIP {
			return fmt.Errorf("answer %v extra %v, want ns1.ns.dns.cluster.local. at %s", reply.Answer, reply.Extra, dnsIP)
		}
		return nil
	})
}
