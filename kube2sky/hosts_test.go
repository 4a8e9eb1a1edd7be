package kube2sky

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
	"github.com/kubesky/kubesky/kube2sky/source"
)

const hostKeys = "/skydns/local/cluster/hosts/"

func hostsConfig(c *Config) {
	c.HostsConfigMap = "kube-system/hosts"
	c.HostsDomain = "example.corp"
}

func hostsMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hosts"}, Data: data}
}

func (h *harness) putConfigMap(cm *corev1.ConfigMap) {
	h.t.Helper()
	cm.ResourceVersion = h.nextRV()
	cms := h.kube.CoreV1().ConfigMaps(cm.Namespace)
	_, err := cms.Update(context.Background(), cm, metav1.UpdateOptions{})
	if err != nil {
		_, err = cms.Create(context.Background(), cm, metav1.CreateOptions{})
	}
	if err != nil {
		h.t.Fatalf("put configmap: %v", err)
	}
}

// hostRecord is one host name's address, under hosts.<zone> and example.corp.
func hostRecord(name, ip string) []string {
	label := records.HashLabel(ip, 0)
	return []string{
		hostKeys + name + "/" + label + " " + v(ip),
		"/skydns/corp/example/" + name + "/" + label + " " + v(ip),
	}
}

// waitAll waits until etcd holds exactly want under the zone, the reverse
// tree and example.corp (plus dns-version).
func (h *harness) waitAll(want ...string) {
	h.t.Helper()
	want = append(want, dnsVersion)
	slices.Sort(want)
	h.eventually("etcd holds the expected records", func() error {
		got := h.dump()
		resp, err := h.etcd.Client.Get(h.t.Context(), "/skydns/corp/", clientv3.WithPrefix())
		if err != nil {
			return err
		}
		for _, kv := range resp.Kvs {
			got = append(got, string(kv.Key)+" "+string(kv.Value))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		return nil
	})
}

func TestHostRecordsFollowTheConfigMap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.add(hostsMap(map[string]string{"hosts": "10.0.0.5 db1.example.corp db1\n"}))
	r := h.start("a", hostsConfig)
	h.waitLeader(r)
	ptr5 := "/skydns/arpa/in-addr/10/0/0/5 " + v("db1.example.corp.")
	h.waitAll(append(hostRecord("db1", "10.0.0.5"), ptr5)...)

	t.Run("an edit changes the records within a second", func(t *testing.T) {
		start, txnsBefore := time.Now(), txns(r)
		h.putConfigMap(hostsMap(map[string]string{"hosts": "10.0.0.6 db1\n", "more": "fd00::7 db7 # v6\n"}))
		want := slices.Concat(hostRecord("db1", "10.0.0.6"), hostRecord("db7", "fd00::7"),
			[]string{"/skydns/arpa/in-addr/10/0/0/6 " + v("db1.example.corp."),
				contract.ReverseKey("/skydns", netip.MustParseAddr("fd00::7")) + " " + v("db7.example.corp.")})
		h.waitAll(want...)
		t.Logf("edit applied in %v", time.Since(start))
		if got := txns(r) - txnsBefore; got != 1 {
			t.Errorf("the edit took %v Txns, want 1", got)
		}
		if got := value(r.metrics.hostsRecords); got != float64(len(want)) {
			t.Errorf("kube2sky_hosts_records = %v, want %d", got, len(want))
		}
	})
	t.Run("a bad line is reported and the rest still applies", func(t *testing.T) {
		h.putConfigMap(hostsMap(map[string]string{"hosts": "10.0.0.6 db1\n10.0.0.x db9\n10.0.0.8 db8\n"}))
		h.waitAll(slices.Concat(hostRecord("db1", "10.0.0.6"), hostRecord("db8", "10.0.0.8"),
			[]string{"/skydns/arpa/in-addr/10/0/0/6 " + v("db1.example.corp."), "/skydns/arpa/in-addr/10/0/0/8 " + v("db8.example.corp.")})...)
		if got := value(r.metrics.hostsInvalidLines); got != 1 {
			t.Errorf("kube2sky_hosts_invalid_lines = %v, want 1", got)
		}
		if got := value(r.metrics.invalidObjects.WithLabelValues("ConfigMap")); got != 1 {
			t.Errorf("kube2sky_invalid_objects_total{kind=ConfigMap} = %v, want 1", got)
		}
		ev := h.waitEvent("kube-system", "ConfigMap", "hosts", source.ReasonInvalidHostsLines)
		if !strings.Contains(ev.Message, `data[hosts] line 2 "10.0.0.x db9"`) || ev.Type != corev1.EventTypeWarning {
			t.Errorf("event %s %q, want a warning naming data[hosts] line 2", ev.Type, ev.Message)
		}
		if err := r.resyncNow(t); err != nil {
			t.Fatal(err)
		}
		if got := value(r.metrics.invalidObjects.WithLabelValues("ConfigMap")); got != 1 {
			t.Errorf("after a resync, the bad line was counted %v times, want once", got)
		}
	})
	t.Run("deleting the ConfigMap deletes its records", func(t *testing.T) {
		if err := h.kube.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), "hosts", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitAll()
	})
}

// corefileWithHosts is a CoreDNS Corefile whose hosts plugin lists addr for
// db1.example.corp, and extra inside the same server block.
func corefileWithHosts(addr, extra string) map[string]string {
	return map[string]string{"Corefile": `.:53 {
    errors
    hosts {
        ` + addr + ` db1.example.corp
        fallthrough
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
` + extra + `}
`}
}

// CoreDNS's own ConfigMap can be the hosts ConfigMap: kube2sky serves its
// hosts plugins' inline entries, and keeps them while a Corefile kubesky
// refuses is in the ConfigMap, as skydns keeps the last usable Corefile.
func TestHostRecordsFollowCoreDNSsCorefile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.add(hostsMap(corefileWithHosts("10.0.0.5", "")))
	r := h.start("a", hostsConfig)
	h.waitLeader(r)
	h.waitAll(append(hostRecord("db1", "10.0.0.5"), "/skydns/arpa/in-addr/10/0/0/5 "+v("db1.example.corp."))...)

	t.Run("a refused Corefile keeps the last usable one's entries and is reported", func(t *testing.T) {
		h.putConfigMap(hostsMap(corefileWithHosts("10.0.0.6", "    frobnicate\n")))
		ev := h.waitEvent("kube-system", "ConfigMap", "hosts", source.ReasonInvalidHostsLines)
		if !strings.Contains(ev.Message, "data[Corefile]: ") || !strings.Contains(ev.Message, "frobnicate") ||
			!strings.Contains(ev.Message, "last usable Corefile stay") {
			t.Errorf("event %q, want the refused Corefile named, with its line", ev.Message)
		}
		h.waitAll(append(hostRecord("db1", "10.0.0.5"), "/skydns/arpa/in-addr/10/0/0/5 "+v("db1.example.corp."))...)
	})
	t.Run("a usable edit applies", func(t *testing.T) {
		h.putConfigMap(hostsMap(corefileWithHosts("10.0.0.7", "")))
		h.waitAll(append(hostRecord("db1", "10.0.0.7"), "/skydns/arpa/in-addr/10/0/0/7 "+v("db1.example.corp."))...)
	})
}

// waitEvent waits for an event with the given reason on an object.
func (h *harness) waitEvent(namespace, kind, name, reason string) corev1.Event {
	h.t.Helper()
	var found corev1.Event
	h.eventually("an event "+reason+" on "+kind+" "+namespace+"/"+name, func() error {
		evs, err := h.kube.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason && ev.InvolvedObject.Kind == kind && ev.InvolvedObject.Name == name {
				found = ev
				return nil
			}
		}
		return errors.New("no such event")
	})
	return found
}

func TestHostRecordsIgnoreOtherConfigMapsAndLoseAPTRToAService(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start("a", func(c *Config) { c.HostsConfigMap = "kube-system/hosts" })
	h.waitLeader(r)
	other := hostsMap(map[string]string{"hosts": "10.0.0.9 nine\n"})
	other.Name = "other"
	h.putConfigMap(other)
	h.create(service("default", "web", []string{"10.96.0.10"}))
	h.putConfigMap(hostsMap(map[string]string{"hosts": "10.96.0.10 web-alias\n"}))
	svcPTR := "/skydns/arpa/in-addr/10/96/0/10 " + v("web.default.svc.cluster.local.")
	alias := hostKeys + "web-alias/" + records.HashLabel("10.96.0.10", 0) + " " + v("10.96.0.10")
	h.waitContents(svcPTR, svcKey+"default/web/4df22e82 "+v("10.96.0.10"), alias)
	h.deleteService("default", "web")
	h.waitContents(alias, "/skydns/arpa/in-addr/10/96/0/10 "+v("web-alias.hosts.cluster.local."))
}

func TestAFullReconcileRemovesOrphanHostRecordsInBothDomains(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.add(hostsMap(map[string]string{"hosts": "10.0.0.5 db1\n"}))
	h.etcd.Put(t, hostKeys+"gone/x", v("10.0.0.1"))
	h.etcd.Put(t, "/skydns/corp/example/gone/x", v("10.0.0.1"))
	h.etcd.Put(t, "/skydns/corp/example/manual/x", `{"host":"10.0.0.2"}`)
	h.etcd.Put(t, "/skydns/arpa/in-addr/10/0/0/1", v("gone.example.corp."))
	r := h.start("a", hostsConfig)
	h.waitLeader(r)
	h.waitAll(slices.Concat(hostRecord("db1", "10.0.0.5"), []string{
		"/skydns/arpa/in-addr/10/0/0/5 " + v("db1.example.corp."),
		`/skydns/corp/example/manual/x {"host":"10.0.0.2"}`,
	})...)
}

func TestExtraRecordsFlags(t *testing.T) {
	tests := []struct {
		name    string
		set     func(*Config)
		wantErr string
	}{
		{"an unknown pod mode", func(c *Config) { c.PodRecords = "on" }, `--pod-records: "on"`},
		{"a ConfigMap without a namespace", func(c *Config) { c.HostsConfigMap = "hosts" }, `--hosts-configmap: "hosts"`},
		{"a ConfigMap with a bad name", func(c *Config) { c.HostsConfigMap = "kube-system/Hosts" }, `--hosts-configmap`},
		{"a hosts domain without a ConfigMap", func(c *Config) { c.HostsDomain = "example.corp" }, "--hosts-domain: needs --hosts-configmap"},
		{"a hosts domain inside the zone", func(c *Config) { hostsConfig(c); c.HostsDomain = "corp.cluster.local" }, `overlaps "cluster.local"`},
		{"a hosts domain above the zone", func(c *Config) { hostsConfig(c); c.HostsDomain = "local" }, `overlaps "cluster.local"`},
		{"a hosts domain in the reverse tree", func(c *Config) { hostsConfig(c); c.HostsDomain = "in-addr.arpa" }, `overlaps "arpa"`},
		{"a hosts domain that is not a name", func(c *Config) { hostsConfig(c); c.HostsDomain = "Example.Corp" }, `not a lower-case domain`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected", func(t *testing.T) {
			cfg := testConfig("http://127.0.0.1:2379")
			tt.set(&cfg)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	t.Run("the defaults and a full setting are valid", func(t *testing.T) {
		cfg := testConfig("http://127.0.0.1:2379")
		if err := cfg.Validate(); err != nil || cfg.PodRecords != PodsDisabled {
			t.Fatalf("defaults: %v (pod records %q)", err, cfg.PodRecords)
		}
		hostsConfig(&cfg)
		cfg.PodRecords = PodsVerified
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTheHostsAndPodsDocNamesRealFlagsAndMetrics keeps docs/hosts-and-pods.md
// honest on kube2sky's side: its kube2sky flags and metrics exist.
func TestTheHostsAndPodsDocNamesRealFlagsAndMetrics(t *testing.T) {
	doc, err := os.ReadFile("../docs/hosts-and-pods.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("kube2sky", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	rows := regexp.MustCompile("(?m)^\\| kube2sky \\| `--([a-z0-9-]+)` \\|\\s*`?([^|`]*?)`?\\s*\\|").FindAllStringSubmatch(string(doc), -1)
	if len(rows) != 3 {
		t.Fatalf("%d kube2sky flag rows, want 3", len(rows))
	}
	for _, m := range rows {
		if f := fs.Lookup(m[1]); f == nil || strings.TrimSpace(m[2]) != f.DefValue {
			t.Errorf("--%s (default %q) is not a kube2sky flag with that default", m[1], m[2])
		}
	}
	h := newHarness(t)
	r := h.start("a", hostsConfig)
	families, err := r.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`(kube2sky_[a-z_]+)").FindAllStringSubmatch(string(doc), -1) {
		if !slices.ContainsFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == m[1] }) && m[1] != "kube2sky_invalid_objects_total" {
			t.Errorf("metric %s is not registered", m[1])
		}
	}
}
