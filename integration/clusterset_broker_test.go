package integration

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/kube2sky/clusterset"
)

// TestClustersetOnABrokerEtcdWithAuth runs two clusters whose records live
// each in its own etcd and whose clusterset lives in a third, the broker,
// with TLS and auth on and the users `kubesky clusterset grant` made: each
// kube2sky as kube2sky-<id>, each skydns as clusterset-reader, every one
// authenticated by its client certificate.
func TestClustersetOnABrokerEtcdWithAuth(t *testing.T) {
	harness.RequireDig(t)
	pki := harness.NewEtcdPKI(t)
	broker := harness.StartSecureEtcd(t, pki, "root")
	grantArgs := append([]string{"clusterset", "grant", "--etcd-endpoints=" + broker.Endpoint, "--cluster-id=east", "--cluster-id=west",
		"--enable-auth"}, pki.Flags(pki.Client(t, "root"))...)
	t.Run("kubesky clusterset grant makes the users, then has nothing to change", func(t *testing.T) {
		if out := runKubesky(t, grantArgs...); !strings.Contains(out, "added user kube2sky-east") || !strings.Contains(out, "enabled auth") {
			t.Fatalf("the first grant says:\n%s", out)
		}
		if out := runKubesky(t, grantArgs...); !strings.HasPrefix(out, "nothing to change") {
			t.Fatalf("the second grant says:\n%s", out)
		}
	})
	reader := append(pki.PrefixedFlags("clusterset-", pki.Client(t, clusterset.ReaderUser)), "--clusterset-etcd-endpoints="+broker.Endpoint)
	records, clusters, skies := map[string]*harness.Etcd{}, map[string]*mcsCluster{}, map[string]*harness.SkyDNS{}
	for _, id := range []string{"east", "west"} {
		records[id] = harness.StartEtcd(t)
		clusters[id] = startMCSCluster(t, id, records[id].Endpoint, append(pki.PrefixedFlags("clusterset-", pki.Client(t, clusterset.ClusterUser(id))),
			"--clusterset-etcd-endpoints="+broker.Endpoint)...)
		skies[id] = harness.StartSkyDNS(t, records[id].Endpoint, append([]string{"--prefix=/skydns-" + id, "--clusterset-prefix=/clusterset",
			"--cluster-id=" + id}, reader...)...)
	}
	exportService(t, clusters["east"], mcsHeadlessService("db"), mcsEndpointSlice("db", "10.1.0.5", ptr.To("db-0")))
	exportService(t, clusters["west"], mcsHeadlessService("db"), mcsEndpointSlice("db", "10.2.0.9", nil))

	t.Run("each skydns answers both clusters' endpoints in clusterset.local", func(t *testing.T) {
		for _, sky := range skies {
			digWithin(t, sky.DNSAddr, "db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.5", "10.2.0.9")
			digWithin(t, sky.DNSAddr, "10-2-0-9.west.db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.2.0.9")
		}
	})
	t.Run("each skydns answers its own cluster's names from its own etcd", func(t *testing.T) {
		digWithin(t, skies["east"].DNSAddr, "db.shop.svc.cluster.local.", "A", dns.RcodeSuccess, "10.1.0.5")
		digWithin(t, skies["west"].DNSAddr, "db.shop.svc.cluster.local.", "A", dns.RcodeSuccess, "10.2.0.9")
	})
	t.Run("the broker holds the clusterset only, each cluster's etcd its records only", func(t *testing.T) {
		wantKeys(t, broker.Client(), "/skydns", 0)
		for id, etcd := range records {
			wantKeys(t, etcd.Client(), "/clusterset", 0)
			wantKeys(t, etcd.Client(), "/skydns-"+id+"/", -1)
		}
	})
	t.Run("skydns reports the broker reachable", func(t *testing.T) {
		for id, sky := range skies {
			if m, err := sky.Metrics(); err != nil || m["skydns_clusterset_etcd_connected"] != 1 || m["skydns_clusterset_synced"] != 1 {
				t.Errorf("%s: skydns_clusterset_etcd_connected %v, skydns_clusterset_synced %v (%v), want 1 and 1", id,
					m["skydns_clusterset_etcd_connected"], m["skydns_clusterset_synced"], err)
			}
		}
	})
}

// wantKeys checks that the etcd holds want keys under prefix (-1: some).
func wantKeys(t *testing.T, c *clientv3.Client, prefix string, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || want >= 0 && resp.Count != want || want < 0 && resp.Count == 0 {
		t.Errorf("keys under %s: %v (%v), want %d (-1: some)", prefix, resp, err, want)
	}
}

// runKubesky runs bin/kubesky with args and returns its output, failing
// the test if it fails.
func runKubesky(t *testing.T, args ...string) string {
	t.Helper()
	harness.RequireBinaries(t, "kubesky")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, harness.Binary("kubesky"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubesky %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
