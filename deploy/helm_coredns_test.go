package deploy

import (
	"slices"
	"strings"
	"testing"
)

// TestChartReadsCoreDNSsConfigMap renders the chart as docs/migrate.md
// installs it in place of CoreDNS: skydns reads the Corefile from CoreDNS's
// ConfigMap (and no --zone or --lameduck that could disagree with it),
// kube2sky its own settings from it and its hosts entries, which its Role
// may read, and the Service is kept on uninstall.
func TestChartReadsCoreDNSsConfigMap(t *testing.T) {
	values := map[string]any{
		"coreDNS": map[string]any{"configMap": "coredns", "hostsDomain": "example.corp"},
		"service": map[string]any{"keep": true},
	}
	for topology, names := range map[string][2]string{
		"per-pod": {"Deployment/kube-system/kubesky", "Deployment/kube-system/kubesky"},
		"shared":  {"Deployment/kube-system/kubesky-skydns", "Deployment/kube-system/kubesky-kube2sky"},
	} {
		t.Run(topology, func(t *testing.T) {
			values["topology"] = topology
			objs := byName(renderChart(t, values))
			skydnsPod, kube2skyPod := objs[names[0]], objs[names[1]]
			if skydnsPod == nil || kube2skyPod == nil {
				t.Fatalf("no %s or %s", names[0], names[1])
			}
			skydns := stringList(container(t, skydnsPod, "skydns")["args"])
			if !slices.Contains(skydns, "--corefile=/etc/coredns/Corefile") || slices.ContainsFunc(skydns, func(a string) bool {
				return strings.HasPrefix(a, "--zone=") || strings.HasPrefix(a, "--lameduck=")
			}) {
				t.Errorf("skydns args %q, want --corefile and no --zone or --lameduck", skydns)
			}
			if got := toYAMLValue(container(t, skydnsPod, "skydns")["volumeMounts"]); !strings.Contains(got, "mountPath: /etc/coredns") {
				t.Errorf("skydns mounts no Corefile:\n%s", got)
			}
			if got := toYAMLValue(podTemplate(t, skydnsPod).Object["spec"].(map[string]any)["volumes"]); !strings.Contains(got, "name: coredns") {
				t.Errorf("no volume of the ConfigMap coredns:\n%s", got)
			}
			kube2sky := stringList(container(t, kube2skyPod, "kube2sky")["args"])
			for _, want := range []string{"--corefile=/etc/coredns/Corefile", "--hosts-configmap=kube-system/coredns", "--hosts-domain=example.corp"} {
				if !slices.Contains(kube2sky, want) {
					t.Errorf("kube2sky args %q, want %s", kube2sky, want)
				}
			}
			if got := toYAMLValue(container(t, kube2skyPod, "kube2sky")["volumeMounts"]); !strings.Contains(got, "mountPath: /etc/coredns") {
				t.Errorf("kube2sky mounts no Corefile:\n%s", got)
			}
			if got := toYAMLValue(podTemplate(t, kube2skyPod).Object["spec"].(map[string]any)["volumes"]); !strings.Contains(got, "name: coredns") {
				t.Errorf("kube2sky's pod has no volume of the ConfigMap coredns:\n%s", got)
			}
			if got := toYAMLValue(objs["Role/kube-system/kubesky-kube-dns-config"].Object["rules"]); !strings.Contains(got, "- coredns") {
				t.Errorf("kube2sky's Role cannot read the ConfigMap coredns:\n%s", got)
			}
			if got := objs["Service/kube-system/kube-dns"].GetAnnotations()["helm.sh/resource-policy"]; got != "keep" {
				t.Errorf("the Service's helm.sh/resource-policy is %q, want keep", got)
			}
		})
	}
	t.Run("a ConfigMap name that is not one is refused", func(t *testing.T) {
		_, err := renderChartErr(map[string]any{"coreDNS": map[string]any{"configMap": "Core DNS"}})
		if err == nil || !strings.Contains(err.Error(), "/coreDNS/configMap") {
			t.Errorf("rendered with coreDNS.configMap=%q: %v, want an error naming the value", "Core DNS", err)
		}
	})
}
