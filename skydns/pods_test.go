package skydns

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

const podKey = "/skydns/local/cluster/pod/default/10-244-1-5"

// TestPodRecordsOverUDP runs one daemon per --pod-records mode over the
// same etcd and asks each the same questions over real UDP (the fast path
// included) and TCP, before and after the verified record goes away.
func TestPodRecordsOverUDP(t *testing.T) {
	etcd := etcdtest.Start(t)
	etcd.Put(t, "/skydns/local/cluster/dns-version", `{"text":"1.1.0"}`)
	rev := etcd.Put(t, podKey, `{"host":"10.244.1.5","owner":"kube2sky.cluster.local"}`)
	daemons := map[string]*Daemon{}
	for _, mode := range []string{"disabled", "insecure", "verified", "insecure in kube-system", "verified in kube-system"} {
		cfg := testConfig(etcd.ClientURL())
		cfg.PodRecords, _, _ = strings.Cut(mode, " ")
		if strings.HasSuffix(mode, " in kube-system") {
			cfg.PodNamespaces = []string{"kube-system"}
		}
		daemons[mode] = startDaemon(t, cfg)
	}
	for _, d := range daemons {
		waitRevision(t, d, rev)
	}
	const pod, other = "10-244-1-5.default.pod.cluster.local.", "1-2-3-4.default.pod.cluster.local."
	expect := func(mode, name string, rcode int, want ...string) {
		t.Helper()
		for range 3 { // the first answer fills the fast path's cache, the next ones come from it
			for _, proto := range []string{"udp", "tcp"} {
				if c := answerIs(dnstest.Ask(t, proto, daemons[mode].DNSAddr(), name, dns.TypeA), rcode, want...); c != "" {
					t.Errorf("%s over %s, %s: %s", name, proto, mode, c)
				}
			}
		}
	}
	t.Run("disabled answers NXDOMAIN although the record exists", func(t *testing.T) {
		expect("disabled", pod, dns.RcodeNameError)
	})
	t.Run("insecure synthesizes any address", func(t *testing.T) {
		expect("insecure", pod, dns.RcodeSuccess, "10.244.1.5")
		expect("insecure", other, dns.RcodeSuccess, "1.2.3.4")
		expect("insecure", "1-2-3.default.pod.cluster.local.", dns.RcodeNameError)
	})
	t.Run("verified answers only the pods written to etcd", func(t *testing.T) {
		expect("verified", pod, dns.RcodeSuccess, "10.244.1.5")
		expect("verified", other, dns.RcodeNameError)
	})
	t.Run("--pod-namespaces leaves the other namespaces' pod names out", func(t *testing.T) {
		for _, mode := range []string{"insecure in kube-system", "verified in kube-system"} {
			expect(mode, pod, dns.RcodeNameError)
			expect(mode, "default.pod.cluster.local.", dns.RcodeNameError)
		}
		expect("insecure in kube-system", "kube-system.pod.cluster.local.", dns.RcodeSuccess)
		expect("insecure in kube-system", "1-2-3-4.kube-system.pod.cluster.local.", dns.RcodeSuccess, "1.2.3.4")
	})
	t.Run("verified forgets a pod as soon as its record is deleted", func(t *testing.T) {
		etcd.Delete(t, podKey)
		rev := etcd.Put(t, "/skydns/local/cluster/marker/x", `{"text":"after the delete"}`)
		waitRevision(t, daemons["verified"], rev)
		expect("verified", pod, dns.RcodeNameError)
		expect("insecure", pod, dns.RcodeSuccess, "10.244.1.5")
	})
}

func waitRevision(t *testing.T, d *Daemon, rev int64) {
	t.Helper()
	polltest.NoComplaint(t, "the snapshot reaches the revision", func() string {
		if d.Mirror().Snapshot().Revision() < rev {
			return "behind"
		}
		return ""
	})
}

func TestPodRecordsFlag(t *testing.T) {
	for _, bad := range []string{"", "on", "Verified"} {
		cfg := testConfig("http://127.0.0.1:1")
		cfg.PodRecords = bad
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--pod-records") {
			t.Errorf("--pod-records=%q: error %v, want one naming the flag", bad, err)
		}
	}
	cfg := testConfig("http://127.0.0.1:1")
	cfg.PodNamespaces = []string{"default", "Kube_System"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `--pod-namespaces: "Kube_System" is not a namespace name`) {
		t.Errorf("--pod-namespaces=default,Kube_System: error %v, want one naming the flag and the value", err)
	}
	cfg = testConfig("http://127.0.0.1:1")
	if err := cfg.Validate(); err != nil || cfg.PodRecords != "disabled" {
		t.Errorf("default --pod-records %q (%v), want disabled", cfg.PodRecords, err)
	}
}

// TestTheHostsAndPodsDocNamesSkydnsFlags keeps docs/hosts-and-pods.md
// honest on skydns's side.
func TestTheHostsAndPodsDocNamesSkydnsFlags(t *testing.T) {
	doc, err := os.ReadFile("../docs/hosts-and-pods.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("skydns", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	rows := regexp.MustCompile("(?m)^\\| skydns \\| `--([a-z0-9-]+)` \\|\\s*`?([^|`]*?)`?\\s*\\|").FindAllStringSubmatch(string(doc), -1)
	if len(rows) == 0 {
		t.Fatal("no skydns flag rows")
	}
	for _, m := range rows {
		if f := fs.Lookup(m[1]); f == nil || strings.TrimSpace(m[2]) != f.DefValue {
			t.Errorf("--%s (default %q) is not a skydns flag with that default", m[1], m[2])
		}
	}
}
