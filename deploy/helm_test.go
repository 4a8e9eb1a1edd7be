package deploy

import (
	"bytes"
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// chartDir is the Helm chart, relative to this package.
const chartDir = "helm/kubesky"

// helmOnlyLabels are the labels the chart adds to every object's metadata
// (Helm's standard labels) and the kustomizations do not: the only
// difference TestChartRendersTheKustomizations allows.
var helmOnlyLabels = []string{
	"app.kubernetes.io/instance",
	"app.kubernetes.io/managed-by",
	"app.kubernetes.io/version",
	"helm.sh/chart",
}

// renderChart renders the chart as `helm template kubesky -n kube-system`
// does, with values over the defaults (checked against values.schema.json).
func renderChart(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderChartErr(values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func renderChartErr(values map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	opts := chartutil.ReleaseOptions{Name: "kubesky", Namespace: "kube-system", Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, ".yaml") {
			buf.WriteString("\n---\n" + files[name])
		}
	}
	return Decode("helm template", buf.Bytes())
}

// kustomize builds dir as `kubectl kustomize` does.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(dir, data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// withoutHelmLabels returns obj without helmOnlyLabels in its metadata.
func withoutHelmLabels(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	labels := obj.GetLabels()
	for _, l := range helmOnlyLabels {
		delete(labels, l)
	}
	obj.SetLabels(labels)
	return obj
}

func byName(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, obj := range objs {
		m[Describe(obj)] = obj
	}
	return m
}

// requireSameObjects fails t unless chart and kust hold the same objects,
// field for field, once helmOnlyLabels are taken off the chart's.
func requireSameObjects(t *testing.T, chart, kust []*unstructured.Unstructured) {
	t.Helper()
	c, k := byName(chart), byName(kust)
	if got, want := slices.Sorted(maps.Keys(c)), slices.Sorted(maps.Keys(k)); !slices.Equal(got, want) {
		t.Fatalf("the chart renders %v, the kustomization %v", got, want)
	}
	for name, want := range k {
		got := withoutHelmLabels(c[name])
		if !equality.Semantic.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s differs:\nchart:\n%s\nkustomization:\n%s", name, toYAML(got), toYAML(want))
		}
	}
}

func toYAML(obj *unstructured.Unstructured) string {
	data, _ := yaml.Marshal(obj.Object)
	return string(data)
}

// TestChartRendersTheKustomizations checks that the chart's default values
// render, for each topology, the objects its kustomization builds, differing
// only in Helm's standard labels (helmOnlyLabels).
func TestChartRendersTheKustomizations(t *testing.T) {
	for topology, dir := range map[string]string{"per-pod": "kubernetes", "shared": "shared-etcd", "node-local": "node-local"} {
		t.Run(topology+" is "+dir, func(t *testing.T) {
			chart := renderChart(t, map[string]any{"topology": topology})
			requireSameObjects(t, chart, kustomize(t, dir))
		})
	}
}

// TestChartComparisonSeesChanges checks that the comparison fails where the
// chart's values change an object: it would otherwise pass anything.
func TestChartComparisonSeesChanges(t *testing.T) {
	kust := map[string]map[string]*unstructured.Unstructured{
		"per-pod":    byName(kustomize(t, "kubernetes")),
		"shared":     byName(kustomize(t, "shared-etcd")),
		"node-local": byName(kustomize(t, "node-local")),
	}
	etcd := func(values map[string]any) map[string]any {
		return map[string]any{"topology": "shared", "etcd": values}
	}
	nodeLocal := func(values map[string]any) map[string]any {
		return map[string]any{"topology": "node-local", "nodeLocal": values}
	}
	for _, change := range []struct {
		object string
		values map[string]any
	}{
		{"Deployment/kube-system/kubesky", map[string]any{"replicaCount": 3}},
		{"Service/kube-system/kube-dns", map[string]any{"service": map[string]any{"clusterIP": "10.96.0.20"}}},
		{"StatefulSet/kube-system/kubesky-etcd", etcd(map[string]any{"storageClassName": "local"})},
		{"StatefulSet/kube-system/kubesky-etcd", etcd(map[string]any{"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Delete"}})},
		{"DaemonSet/kube-system/kubesky-node-local", nodeLocal(map[string]any{"address": "169.254.20.11"})},
		{"Deployment/kube-system/kubesky-etcd-relay", etcd(map[string]any{"relay": map[string]any{"replicaCount": 3}})},
		{"Service/kube-system/kubesky-etcd-relay", etcd(map[string]any{"relay": map[string]any{"clusterIP": "10.96.0.15"}})},
	} {
		topology, _ := change.values["topology"].(string)
		want := kust[cmp.Or(topology, "per-pod")][change.object]
		got := withoutHelmLabels(byName(renderChart(t, change.values))[change.object])
		if equality.Semantic.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s with %v equals the kustomization's", change.object, change.values)
		}
	}
}

// TestChartSchemaNamesWrongValues checks that values.schema.json refuses a
// wrong value with an error naming it.
func TestChartSchemaNamesWrongValues(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"topology":                       {"topology": "node-cache"},
		"replicaCount":                   {"replicaCount": "two"},
		"clusterIP":                      {"service": map[string]any{"clusterIP": "kube-dns"}},
		"pullPolicy":                     {"image": map[string]any{"pullPolicy": "Sometimes"}},
		"replicas":                       {"replicas": 3},
		"mountPath":                      {"extraSecrets": []any{map[string]any{"name": "x", "mountPath": "rel"}}},
		"/nodeLocal/address":             {"nodeLocal": map[string]any{"address": "node-local"}},
		"/nodeLocal/updateStrategy/type": {"nodeLocal": map[string]any{"updateStrategy": map[string]any{"type": "Recreate"}}},
		"/etcd/relay/replicaCount":       {"etcd": map[string]any{"relay": map[string]any{"replicaCount": 0}}},
		"tolerations":                    {"nodeLocal": map[string]any{"tolerations": "all"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderChartErr(values)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("values %v: error %v does not name %s", values, err, name)
			}
		})
	}
}

// TestChartRulesAreMonitorings checks that the chart's copy of the alert
// rules is deploy/monitoring's.
func TestChartRulesAreMonitorings(t *testing.T) {
	chart, err1 := os.ReadFile(filepath.Join(chartDir, "files", "kubesky-rules.yaml"))
	orig, err2 := os.ReadFile(filepath.Join("monitoring", "kubesky-rules.yaml"))
	if err1 != nil || err2 != nil || !bytes.Equal(chart, orig) {
		t.Fatalf("%s/files/kubesky-rules.yaml differs from monitoring/kubesky-rules.yaml (%v, %v)", chartDir, err1, err2)
	}
}

// TestChartOptions checks the objects the chart adds on request against
// their counterparts in deploy/: the autoscale component's HPA and the
// PrometheusRule of monitoring/.
func TestChartOptions(t *testing.T) {
	chart := byName(renderChart(t, map[string]any{
		"topology":   "shared",
		"hpa":        map[string]any{"enabled": true},
		"prometheus": map[string]any{"rules": map[string]any{"enabled": true}, "monitor": map[string]any{"enabled": true}},
	}))
	hpa, err := SharedEtcdAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("monitoring", "kubesky-prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rule, err := Decode("monitoring", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(hpa, rule...) {
		got, ok := chart[Describe(want)]
		if !ok || !equality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"]) {
			t.Errorf("%s: chart\n%v\nwant spec\n%s", Describe(want), got, toYAML(want))
		}
	}
	if _, ok := chart["ServiceMonitor/kube-system/kubesky"]; !ok {
		t.Error("no ServiceMonitor")
	}
}

// containerArgs are the args of all the containers of a workload, one
// list.
func containerArgs(t *testing.T, workload *unstructured.Unstructured) []string {
	t.Helper()
	if workload == nil {
		t.Fatal("workload not rendered")
	}
	containers, _, _ := unstructured.NestedSlice(workload.Object, "spec", "template", "spec", "containers")
	var out []string
	for _, c := range containers {
		args, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
		out = append(out, args...)
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestChartValuesReachThePods checks the values of the DNS pods in both
// topologies: each must show where the default renders something else.
func TestChartValuesReachThePods(t *testing.T) {
	values := map[string]any{
		"zone":                      "example.internal",
		"image":                     map[string]any{"repository": "registry.example.com/k", "tag": "v1", "pullPolicy": "IfNotPresent"},
		"priorityClassName":         "",
		"affinity":                  map[string]any{"nodeAffinity": map[string]any{}},
		"topologySpreadConstraints": []any{},
		"hpa":                       map[string]any{"enabled": true},
		"extraSecrets":              []any{map[string]any{"name": "extra", "mountPath": "/etc/extra"}},
	}
	for topology, name := range map[string]string{"per-pod": "kubesky", "shared": "kubesky-skydns", "node-local": "kubesky-skydns"} {
		t.Run(topology, func(t *testing.T) {
			values["topology"] = topology
			d := byName(renderChart(t, values))["Deployment/kube-system/"+name]
			if d == nil {
				t.Fatalf("no Deployment %s", name)
			}
			checkPodValues(t, d)
		})
	}
}

// checkPodValues checks what TestChartValuesReachThePods sets in d.
func checkPodValues(t *testing.T, d *unstructured.Unstructured) {
	t.Helper()
	spec := podTemplate(t, d).Object["spec"].(map[string]any)
	skydns := container(t, d, "skydns")
	mounts, _, _ := unstructured.NestedSlice(skydns, "volumeMounts")
	for what, bad := range map[string]bool{
		"replicas set under an HPA":         hasField(d.Object, "spec", "replicas"),
		"a priorityClassName":               hasField(spec, "priorityClassName"),
		"no affinity":                       !hasField(spec, "affinity"),
		"topologySpreadConstraints":         hasField(spec, "topologySpreadConstraints"),
		"the image is not the repository's": skydns["image"] != "registry.example.com/k/skydns:v1",
		"no pull policy":                    skydns["imagePullPolicy"] != "IfNotPresent",
		"the zone is not --zone":            !slices.Contains(stringList(skydns["args"]), "--zone=example.internal"),
		"extra is not mounted":              !strings.Contains(toYAMLValue(mounts), "mountPath: /etc/extra"),
		"extra is not a volume":             !strings.Contains(toYAMLValue(spec["volumes"]), "secretName: extra"),
	} {
		if bad {
			t.Errorf("%s: %s\n%s", Describe(d), what, toYAML(d))
		}
	}
}

func hasField(obj map[string]any, fields ...string) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	return found
}

func container(t *testing.T, d *unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(podTemplate(t, d).Object, "spec", "containers")
	for _, c := range containers {
		if c := c.(map[string]any); c["name"] == name {
			return c
		}
	}
	t.Fatalf("%s has no container %s", Describe(d), name)
	return nil
}

func toYAMLValue(v any) string {
	data, _ := yaml.Marshal(v)
	return string(data)
}

// TestChartNodeLocalValues checks that the node-local values reach the
// DaemonSet's two skydns and the relays, each where the default
// renders something else.
func TestChartNodeLocalValues(t *testing.T) {
	objs := byName(renderChart(t, map[string]any{
		"topology":     "node-local",
		"zone":         "example.internal",
		"extraSecrets": []any{map[string]any{"name": "extra", "mountPath": "/etc/extra"}},
		"nodeLocal": map[string]any{
			"address":           "fd00::10",
			"resources":         map[string]any{"requests": map[string]any{"cpu": "75m"}},
			"priorityClassName": "",
			"tolerations":       []any{},
			"updateStrategy":    map[string]any{"type": "OnDelete"},
		},
		"etcd": map[string]any{
			"relay": map[string]any{"clusterIP": "10.96.0.15", "replicaCount": 3, "resources": map[string]any{"requests": map[string]any{"cpu": "80m"}}},
		},
	}))
	ds, proxy := objs["DaemonSet/kube-system/kubesky-node-local"], objs["Deployment/kube-system/kubesky-etcd-relay"]
	if ds == nil || proxy == nil {
		t.Fatalf("no DaemonSet or no relay Deployment in %v", slices.Sorted(maps.Keys(objs)))
	}
	spec := podTemplate(t, ds).Object["spec"].(map[string]any)
	strategy, _, _ := unstructured.NestedString(ds.Object, "spec", "updateStrategy", "type")
	bad := map[string]bool{
		"a priorityClassName":     hasField(spec, "priorityClassName"),
		"tolerations":             hasField(spec, "tolerations"),
		"not updated OnDelete":    strategy != "OnDelete",
		"the relays' replicas":    !strings.Contains(toYAMLValue(proxy.Object["spec"]), "replicas: 3"),
		"the relays' cpu request": !strings.Contains(toYAMLValue(container(t, proxy, "relay")), "cpu: 80m"),
		"the relay Service's IP":  !strings.Contains(toYAMLValue(objs["Service/kube-system/kubesky-etcd-relay"]), "clusterIP: 10.96.0.15"),
		"extra is not a volume":   !strings.Contains(toYAMLValue(spec["volumes"]), "secretName: extra"),
	}
	for _, name := range []string{"skydns"} {
		skydns := toYAMLValue(container(t, ds, name))
		for _, want := range []string{"--dns-addr=[fd00::10]:53", "--etcd-endpoints=https://10.96.0.15:2379", "--zone=example.internal", "cpu: 75m", "mountPath: /etc/extra"} {
			bad[name+" has no "+want] = !strings.Contains(skydns, want)
		}
	}
	for what, wrong := range bad {
		if wrong {
			t.Errorf("%s\n%s\n%s", what, toYAML(ds), toYAML(proxy))
		}
	}
}
