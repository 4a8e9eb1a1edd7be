package deploy

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of a kustomization.yaml the tests read.
type kustomization struct {
	Kind      string   `json:"kind"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name string `json:"name"`
	} `json:"images"`
	Patches []struct {
		Patch string `json:"patch"`
	} `json:"patches"`
}

// checkImagesNamed fails t for every image of objs that k's images do not
// name.
func checkImagesNamed(t *testing.T, k kustomization, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, image := range images(objs) {
		name, _, _ := strings.Cut(image, ":")
		if !slices.ContainsFunc(k.Images, func(i struct {
			Name string `json:"name"`
		}) bool {
			return i.Name == name
		}) {
			t.Errorf("image %s is not in kustomization.yaml's images", name)
		}
	}
}

// readKustomization reads dir's kustomization.yaml.
func readKustomization(t *testing.T, dir string) kustomization {
	t.Helper()
	data, err := files.ReadFile(dir + "/" + KustomizationFile)
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSharedEtcdKustomization checks that shared-etcd's kustomization
// takes kubernetes/ as its base, lists every file of its own, names every
// image, and deletes exactly the objects SharedEtcd leaves out.
func TestSharedEtcdKustomization(t *testing.T) {
	k := readKustomization(t, "shared-etcd")
	entries, _ := files.ReadDir("shared-etcd")
	t.Run("the base and every manifest are resources", func(t *testing.T) {
		want := append([]string{"../kubernetes"}, manifestNames(entries)...)
		if !slices.Equal(sortedCopy(k.Resources), sortedCopy(want)) {
			t.Fatalf("resources %v, want %v", k.Resources, want)
		}
	})
	objs := sharedObjects(t)
	t.Run("every image is named", func(t *testing.T) { checkImagesNamed(t, k, objs) })
	t.Run("the patches delete the per-pod Deployment and its PodDisruptionBudget", func(t *testing.T) {
		var deleted []string
		for _, p := range k.Patches {
			var obj unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(p.Patch), &obj.Object); err != nil {
				t.Fatal(err)
			}
			if obj.Object["$patch"] == "delete" {
				deleted = append(deleted, obj.GetKind()+"/"+obj.GetName())
			}
		}
		base, _ := Manifests()
		var want []string
		for _, obj := range base {
			if replacedBySharedEtcd(obj) {
				want = append(want, obj.GetKind()+"/"+obj.GetName())
			}
		}
		if !slices.Equal(sortedCopy(deleted), sortedCopy(want)) || len(want) != 2 {
			t.Fatalf("patches delete %v, SharedEtcd leaves out %v", deleted, want)
		}
	})
	t.Run("autoscale is a component with its HPA", func(t *testing.T) {
		a := readKustomization(t, "shared-etcd/autoscale")
		hpas, err := SharedEtcdAutoscale()
		if err != nil || a.Kind != "Component" || !slices.Equal(a.Resources, []string{"hpa.yaml"}) || len(hpas) != 1 {
			t.Fatalf("kind %s, resources %v, %d objects, %v", a.Kind, a.Resources, len(hpas), err)
		}
	})
}

func sharedObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := SharedEtcd()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestSharedEtcdWiring checks that the pieces of shared-etcd point at each
// other: the members' addresses, the Secret's keys, the selectors of the
// Services, the PodDisruptionBudgets and the HPA.
func TestSharedEtcdWiring(t *testing.T) {
	objs := sharedObjects(t)
	set := object(t, objs, "StatefulSet", "kubesky-etcd")
	members := memberAddresses(t, objs)
	t.Run("hostAliases name each member Service's cluster IP", func(t *testing.T) {
		aliases, _, _ := unstructured.NestedSlice(set.Object, "spec", "template", "spec", "hostAliases")
		var got []string
		for _, a := range aliases {
			a := a.(map[string]any)
			got = append(got, a["ip"].(string)+" "+strings.Join(stringList(a["hostnames"]), ","))
		}
		var want []string
		for i, ip := range members {
			want = append(want, ip+" kubesky-etcd-"+strconv.Itoa(i)+".peer")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("hostAliases %v, want %v", got, want)
		}
	})
	t.Run("--initial-cluster names each member's hostAlias", func(t *testing.T) {
		cluster := argValue(t, set, "etcd", "initial-cluster")
		for i := range members {
			name := "kubesky-etcd-" + strconv.Itoa(i)
			if !strings.Contains(cluster, name+"=https://"+name+".peer:2380") {
				t.Errorf("--initial-cluster=%s lacks %s", cluster, name)
			}
		}
	})
	relay := []string{serviceClusterIP(t, objs, "kubesky-etcd-relay")}
	for d, want := range map[string][]string{"kubesky-kube2sky": members, "kubesky-etcd-relay": members, "kubesky-skydns": relay} {
		t.Run(d+" dials "+strings.Join(want, ",")+" over TLS", func(t *testing.T) {
			deployment := object(t, objs, "Deployment", d)
			container := strings.TrimPrefix(strings.TrimPrefix(d, "kubesky-"), "etcd-")
			var hosts []string
			for _, endpoint := range strings.Split(argValue(t, deployment, container, "etcd-endpoints"), ",") {
				u, err := url.Parse(endpoint)
				if err != nil || u.Scheme != "https" {
					t.Fatalf("endpoint %q: %v", endpoint, err)
				}
				hosts = append(hosts, u.Hostname())
			}
			if !slices.Equal(hosts, want) {
				t.Fatalf("--etcd-endpoints hosts %v, want %v", hosts, want)
			}
			for _, flag := range []string{"etcd-cafile", "etcd-certfile", "etcd-keyfile"} {
				if argValue(t, deployment, container, flag) == "" {
					t.Errorf("no --%s", flag)
				}
			}
		})
	}
	t.Run("kube-dns selects skydns and nothing else", func(t *testing.T) {
		selector := serviceSelector(t, object(t, objs, "Service", "kube-dns"), "spec", "selector")
		for _, w := range workloads(objs) {
			if got, want := selector.Matches(podLabels(w)), w.GetName() == "kubesky-skydns"; got != want {
				t.Errorf("kube-dns selects %s: %v", w.GetName(), got)
			}
		}
	})
	t.Run("each PodDisruptionBudget covers exactly one workload", func(t *testing.T) {
		for _, pdb := range objs {
			if pdb.GetKind() != "PodDisruptionBudget" {
				continue
			}
			selector := serviceSelector(t, pdb, "spec", "selector", "matchLabels")
			var covered []string
			for _, w := range workloads(objs) {
				if selector.Matches(podLabels(w)) {
					covered = append(covered, w.GetName())
				}
			}
			if len(covered) != 1 {
				t.Errorf("PodDisruptionBudget %s covers %v", pdb.GetName(), covered)
			}
		}
	})
	t.Run("the HPA scales the skydns Deployment", func(t *testing.T) {
		hpas, _ := SharedEtcdAutoscale()
		target, _, _ := unstructured.NestedString(hpas[0].Object, "spec", "scaleTargetRef", "name")
		object(t, objs, "Deployment", target)
		if target != "kubesky-skydns" {
			t.Fatalf("target %s", target)
		}
	})
}

// memberAddresses are the cluster IPs of the Services kubesky-etcd-0, -1, -2.
func memberAddresses(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var ips []string
	for i := range 3 {
		ips = append(ips, serviceClusterIP(t, objs, "kubesky-etcd-"+strconv.Itoa(i)))
	}
	return ips
}

// argValue is the value of --flag=value among the named container's args.
func argValue(t *testing.T, workload *unstructured.Unstructured, container, flag string) string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(workload.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		c := c.(map[string]any)
		if c["name"] != container {
			continue
		}
		for _, arg := range stringList(c["args"]) {
			if value, ok := strings.CutPrefix(arg, "--"+flag+"="); ok {
				return strings.TrimSpace(stripComment(value))
			}
		}
	}
	t.Fatalf("%s: container %s has no --%s", Describe(workload), container, flag)
	return ""
}

func workloads(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if kind := obj.GetKind(); kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "Job" {
			out = append(out, obj)
		}
	}
	return out
}

func podLabels(workload *unstructured.Unstructured) labels.Set {
	l, _, _ := unstructured.NestedStringMap(workload.Object, "spec", "template", "metadata", "labels")
	return l
}

func serviceSelector(t *testing.T, obj *unstructured.Unstructured, fields ...string) labels.Selector {
	t.Helper()
	m, ok, _ := unstructured.NestedStringMap(obj.Object, fields...)
	if !ok || len(m) == 0 {
		t.Fatalf("%s has no %s", Describe(obj), strings.Join(fields, "."))
	}
	return labels.SelectorFromSet(m)
}
