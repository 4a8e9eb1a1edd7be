package kube2sky

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// corefileWithKube2skySettings asks kube2sky for verified pod records,
// pod-named endpoints, no records for empty Services, two namespaces, a
// TTL, and hosts entries from a file key of its ConfigMap.
const corefileWithKube2skySettings = `.:53 {
    hosts /etc/coredns/corphosts corp.example {
        fallthrough
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods verified
        endpoint_pod_names
        ignore empty_service
        namespaces shop team-a
        ttl 20
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . 8.8.8.8
}
`

// parseWithCorefile parses args after --corefile=<a Corefile holding text,
// beside a corphosts key> and the etcd endpoint every config needs.
func parseWithCorefile(t *testing.T, text string, args ...string) (Config, error) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"Corefile": text, "corphosts": "10.0.0.6 db2.corp.example\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("kube2sky", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	args = append([]string{"--corefile=" + filepath.Join(dir, "Corefile"), "--etcd-endpoints=http://127.0.0.1:2379"}, args...)
	return cfg, cfg.Parse(fs, args)
}

// TestTheCorefilesKube2skySettingsAreTaken: --corefile gives kube2sky the
// kubernetes plugin's options it applies; one also given on the command
// line must agree; a Corefile kubesky refuses stops kube2sky by its line.
func TestTheCorefilesKube2skySettingsAreTaken(t *testing.T) {
	t.Parallel()
	cfg, err := parseWithCorefile(t, corefileWithKube2skySettings, "--hosts-configmap=kube-system/coredns", "--ttl=20")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PodRecords != PodsVerified || !cfg.EndpointPodNames || !cfg.IgnoreEmptyServices || cfg.TTL != 20 ||
		!slices.Equal(cfg.Namespaces, []string{"shop", "team-a"}) || cfg.HostsConfigMap != "kube-system/coredns" || cfg.HostsDomain != "corp.example" {
		t.Errorf("config from the Corefile: %+v", cfg.ExtraRecords)
	}
	for _, c := range []struct {
		text string
		args []string
		want string
	}{
		{corefileWithKube2skySettings, []string{"--ttl=30"}, `--ttl: given as "30", but the --corefile asks for "20" (line 10)`},
		{corefileWithKube2skySettings, []string{"--pod-records=disabled"}, `--pod-records: given as "disabled", but the --corefile asks for "verified"`},
		{".:53 {\n    kubernetes cluster.local\n    nonsense\n}\n", nil, `--corefile: `},
	} {
		if _, err := parseWithCorefile(t, c.text, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q with %q: error %v, want one containing %q", c.text, c.args, err, c.want)
		}
	}
	if _, err := parseWithCorefile(t, "", "--corefile=/nonexistent/Corefile"); err == nil || !strings.Contains(err.Error(), "--corefile: open /nonexistent/Corefile") {
		t.Errorf("a missing Corefile: error %v", err)
	}
}
