package deploy

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clustersetValues enable Multi-Cluster Services in topology, the
// clusters sharing the records' etcd.
func clustersetValues(topology string) map[string]any {
	return map[string]any{"topology": topology, "clusterset": map[string]any{"enabled": true, "clusterID": "east"}}
}

// brokerValues enable them with a broker etcd, its Secrets named unlike
// the defaults.
func brokerValues(topology string) map[string]any {
	values := clustersetValues(topology)
	values["clusterset"].(map[string]any)["broker"] = map[string]any{
		"endpoints":    []any{"https://broker-0.example.com:2379", "https://10.1.0.2:2379"},
		"writerSecret": "east-writer",
		"readerSecret": "east-reader",
	}
	return values
}

// brokerArgs are the flags brokerValues give kube2sky and every skydns.
var brokerArgs = []string{
	"--clusterset-etcd-endpoints=https://broker-0.example.com:2379,https://10.1.0.2:2379",
	"--clusterset-etcd-cafile=/etc/kubesky/clusterset-tls/ca.crt",
	"--clusterset-etcd-certfile=/etc/kubesky/clusterset-tls/tls.crt",
	"--clusterset-etcd-keyfile=/etc/kubesky/clusterset-tls/tls.key",
}

var topologies = []string{"per-pod", "shared", "node-local"}

// TestChartGrantsTheClustersetRBACOnlyWhenEnabled checks that
// clusterset.enabled adds deploy/optional's clusterset ClusterRole, rule
// for rule, and its admission policy, and that the default does not.
func TestChartGrantsTheClustersetRBACOnlyWhenEnabled(t *testing.T) {
	const role = "ClusterRole/system:kubesky:clusterset"
	if _, ok := byName(renderChart(t, nil))[role]; ok {
		t.Errorf("the default values render %s", role)
	}
	chart := byName(renderChart(t, clustersetValues("shared")))
	optional, err := Optional()
	if err != nil {
		t.Fatal(err)
	}
	want := byName(optional)
	for _, name := range []string{role, "ClusterRoleBinding/system:kubesky:clusterset"} {
		got, ok := chart[name]
		if !ok || want[name] == nil || !equality.Semantic.DeepEqual(got.Object["rules"], want[name].Object["rules"]) ||
			!equality.Semantic.DeepEqual(got.Object["roleRef"], want[name].Object["roleRef"]) {
			t.Errorf("%s: chart\n%v\nwant\n%v", name, got, want[name])
		}
	}
	for _, name := range []string{"ValidatingAdmissionPolicy/kubesky-clusterset-writes", "ValidatingAdmissionPolicyBinding/kubesky-clusterset-writes"} {
		got, ok := chart[name]
		if !ok || want[name] == nil || !equality.Semantic.DeepEqual(got.Object["spec"], want[name].Object["spec"]) {
			t.Errorf("%s: chart\n%v\nwant\n%v", name, got, want[name])
		}
	}
}

// TestChartGivesTheClustersetFlagsToKube2skyAndSkydns checks that
// clusterset.enabled without a broker reaches kube2sky and every skydns,
// with no broker flag, and that the auth Job then grants the clusterset
// prefix; without clusterset.enabled none of it is there.
func TestChartGivesTheClustersetFlagsToKube2skyAndSkydns(t *testing.T) {
	wantArgs := []string{"--clusterset-prefix=/clusterset", "--cluster-id=east"}
	const job = "Job/kube-system/kubesky-etcd-auth"
	for topology, workloads := range map[string][]string{
		"shared":     {"Deployment/kube-system/kubesky-kube2sky", "Deployment/kube-system/kubesky-skydns"},
		"node-local": {"Deployment/kube-system/kubesky-kube2sky", "Deployment/kube-system/kubesky-skydns", "DaemonSet/kube-system/kubesky-node-local"},
	} {
		enabled, disabled := byName(renderChart(t, clustersetValues(topology))), byName(renderChart(t, map[string]any{"topology": topology}))
		for _, name := range workloads {
			if got := containerArgs(t, enabled[name]); !containsAll(got, wantArgs) || slices.ContainsFunc(got, isBrokerArg) {
				t.Errorf("%s %s: args %v, want %v among them and no --clusterset-etcd-*", topology, name, got, wantArgs)
			}
			if got := containerArgs(t, disabled[name]); slices.ContainsFunc(got, func(a string) bool { return strings.HasPrefix(a, "--clusterset") }) {
				t.Errorf("%s %s without clusterset: args %v", topology, name, got)
			}
		}
		if got := containerArgs(t, enabled[job]); !slices.Contains(got, "--clusterset-prefix=/clusterset") {
			t.Errorf("%s %s: args %v, want --clusterset-prefix=/clusterset (kube2sky writes it, the relays read it)", topology, job, got)
		}
		if got := containerArgs(t, disabled[job]); slices.ContainsFunc(got, func(a string) bool { return strings.HasPrefix(a, "--clusterset") }) {
			t.Errorf("%s %s without clusterset: args %v", topology, job, got)
		}
	}
}

func isBrokerArg(arg string) bool { return strings.HasPrefix(arg, "--clusterset-etcd-") }

// TestChartRefusesClustersetValuesThatCannotWork checks the failures the
// templates themselves raise, each naming the value to change.
func TestChartRefusesClustersetValuesThatCannotWork(t *testing.T) {
	noID := func(values map[string]any) map[string]any {
		delete(values["clusterset"].(map[string]any), "clusterID")
		return values
	}
	withPrefixes := func(values map[string]any, records, clusterset string) map[string]any {
		values["etcd"] = map[string]any{"prefix": records}
		values["clusterset"].(map[string]any)["prefix"] = clusterset
		return values
	}
	for _, c := range []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{"per-pod without a broker", clustersetValues("per-pod"), []string{"clusterset.broker.endpoints", "topology per-pod needs a broker"}},
		{"no cluster ID, shared", noID(clustersetValues("shared")), []string{"clusterset.clusterID"}},
		{"no cluster ID, per-pod with a broker", noID(brokerValues("per-pod")), []string{"clusterset.clusterID"}},
		{"the clusterset prefix inside the records'", withPrefixes(clustersetValues("shared"), "/east", "/east/clusterset"), []string{"clusterset.prefix: /east/clusterset overlaps etcd.prefix /east"}},
		{"the records' prefix inside the clusterset's", withPrefixes(brokerValues("node-local"), "/cs/east", "/cs"), []string{"clusterset.prefix: /cs overlaps etcd.prefix /cs/east"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderChartErr(c.values)
			for _, want := range c.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v, want an error saying %q", err, want)
				}
			}
		})
	}
	t.Run("disabled, nothing is checked", func(t *testing.T) {
		values := noID(clustersetValues("per-pod"))
		values["clusterset"].(map[string]any)["enabled"] = false
		renderChart(t, values)
	})
}

// brokerRoles is the broker Secret each container mounts: kube2sky the
// writer's, every skydns the reader's, no other container any.
var brokerRoles = map[string]string{"kube2sky": "writer", "skydns": "reader"}

// TestChartMountsEachBrokerSecretOnlyWhereItIsUsed renders every topology
// with a broker and checks each container of every workload: kube2sky
// mounts the writer's Secret and skydns (node-local's too) the reader's,
// each with the broker flags pointing into it; every other container
// mounts neither and has no broker flag; a pod has the volume of a Secret
// only if one of its containers mounts it.
func TestChartMountsEachBrokerSecretOnlyWhereItIsUsed(t *testing.T) {
	for _, topology := range topologies {
		t.Run(topology, func(t *testing.T) {
			seen := map[string]int{}
			for _, obj := range renderChart(t, brokerValues(topology)) {
				if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec"); ok {
					checkBrokerMounts(t, obj, seen)
				}
			}
			if seen["writer"] == 0 || seen["reader"] == 0 {
				t.Errorf("containers per broker Secret %v: want a writer and a reader", seen)
			}
		})
	}
}

// checkBrokerMounts checks one workload for
// TestChartMountsEachBrokerSecretOnlyWhereItIsUsed, counting in seen the
// containers of each role.
func checkBrokerMounts(t *testing.T, workload *unstructured.Unstructured, seen map[string]int) {
	t.Helper()
	spec := podTemplate(t, workload).Object["spec"].(map[string]any)
	wantVolumes := map[string]string{}
	for _, c := range spec["containers"].([]any) {
		c := c.(map[string]any)
		where := Describe(workload) + " container " + c["name"].(string)
		role := brokerRoles[c["name"].(string)]
		var want []string
		if role != "" {
			seen[role]++
			wantVolumes["clusterset-"+role] = map[string]string{"writer": "east-writer", "reader": "east-reader"}[role]
			want = []string{"clusterset-" + role + " at /etc/kubesky/clusterset-tls"}
		}
		if got := clustersetMounts(c); !slices.Equal(got, want) {
			t.Errorf("%s mounts %v, want %v", where, got, want)
		}
		args := stringList(c["args"])
		if role != "" && !containsAll(args, brokerArgs) || role == "" && slices.ContainsFunc(args, isBrokerArg) {
			t.Errorf("%s args %v; broker flags wanted: %v", where, args, role != "")
		}
	}
	got := map[string]string{}
	for _, v := range spec["volumes"].([]any) {
		v := v.(map[string]any)
		if name := v["name"].(string); strings.HasPrefix(name, "clusterset-") {
			got[name], _, _ = unstructured.NestedString(v, "secret", "secretName")
		}
	}
	if !maps.Equal(got, wantVolumes) {
		t.Errorf("%s: broker volumes %v, want %v", Describe(workload), got, wantVolumes)
	}
}

// clustersetMounts are a container's mounts of volumes named clusterset-*,
// "name at path".
func clustersetMounts(c map[string]any) []string {
	var out []string
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	for _, m := range mounts {
		m := m.(map[string]any)
		if name := m["name"].(string); strings.HasPrefix(name, "clusterset-") {
			out = append(out, name+" at "+m["mountPath"].(string))
		}
	}
	return out
}

// TestChartPrefixReachesEveryDaemon checks that etcd.prefix is the --prefix
// of every kube2sky and skydns (node-local's, the relays' with a slash:
// the prefix their /readyz reads) and of the auth Job, which grants it;
// the default passes none, the daemons' own default being /skydns.
func TestChartPrefixReachesEveryDaemon(t *testing.T) {
	for _, topology := range topologies {
		t.Run(topology, func(t *testing.T) {
			uses := daemonUses(t, renderChart(t, map[string]any{"topology": topology, "etcd": map[string]any{"prefix": "/east"}}))
			if len(uses) < 2 {
				t.Fatalf("found %d daemons", len(uses))
			}
			for _, u := range uses {
				want := "--prefix=/east"
				if u.subcommand() == "relay" {
					want += "/"
				}
				if got := prefixArgs(u.args); !slices.Equal(got, []string{want}) {
					t.Errorf("%s: %v, want %s", u.where, got, want)
				}
			}
			for _, u := range daemonUses(t, renderChart(t, map[string]any{"topology": topology})) {
				if got := prefixArgs(u.args); len(got) != 0 {
					t.Errorf("%s with the default: %v", u.where, got)
				}
			}
		})
	}
}

// daemonUses are the uses of kube2sky, skydns and kubesky-demo in objs'
// containers (not their probes).
func daemonUses(t *testing.T, objs []*unstructured.Unstructured) []use {
	t.Helper()
	var out []use
	for _, u := range usesInManifests(t, objs) {
		if u.binary != "healthcheck" && u.binary != "skydns-holder" && !strings.HasSuffix(u.where, "Probe") {
			out = append(out, u)
		}
	}
	return out
}

func prefixArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--prefix") {
			out = append(out, a)
		}
	}
	return out
}

// TestChartSchemaRefusesBadClustersetValues checks values.schema.json on
// the broker's and the prefixes' values: each error names the value.
func TestChartSchemaRefusesBadClustersetValues(t *testing.T) {
	broker := func(key string, value any) map[string]any {
		return map[string]any{"clusterset": map[string]any{"broker": map[string]any{key: value}}}
	}
	for _, c := range []struct {
		name, want string
		values     map[string]any
	}{
		{"a plain http endpoint", "/clusterset/broker/endpoints/0", broker("endpoints", []any{"http://broker:2379"})},
		{"an endpoint with a path", "/clusterset/broker/endpoints/0", broker("endpoints", []any{"https://broker:2379/v3"})},
		{"two endpoints in one", "/clusterset/broker/endpoints/0", broker("endpoints", []any{"https://a:2379,https://b:2379"})},
		{"endpoints as a string", "/clusterset/broker/endpoints", broker("endpoints", "https://broker:2379")},
		{"an endpoint twice", "/clusterset/broker/endpoints", broker("endpoints", []any{"https://a:2379", "https://a:2379"})},
		{"a writer Secret that is no name", "/clusterset/broker/writerSecret", broker("writerSecret", "East Writer")},
		{"an empty reader Secret", "/clusterset/broker/readerSecret", broker("readerSecret", "")},
		{"an unknown broker value", "/clusterset/broker", broker("secret", "east")},
		{"a records prefix ending in a slash", "/etcd/prefix", map[string]any{"etcd": map[string]any{"prefix": "/skydns/"}}},
		{"a relative records prefix", "/etcd/prefix", map[string]any{"etcd": map[string]any{"prefix": "skydns"}}},
		{"a clusterset prefix with an empty segment", "/clusterset/prefix", map[string]any{"clusterset": map[string]any{"prefix": "/cluster//set"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderChartErr(c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("values %v: error %v does not name %s", c.values, err, c.want)
			}
		})
	}
}

// TestTheChartsClustersetFlagsExist checks, as TestEveryFlagUsedExists
// does for the kustomizations, that every flag the chart passes with
// clusterset.enabled and etcd.prefix, with and without a broker, is one
// the built binary knows. The broker flags are left out, and the test
// skipped saying so, while a binary lacks them.
func TestTheChartsClustersetFlagsExist(t *testing.T) {
	var uses []use
	for _, topology := range topologies {
		values := brokerValues(topology)
		values["etcd"] = map[string]any{"prefix": "/east"}
		uses = append(uses, requireUses(t, usesInManifests(t, renderChart(t, values)))...)
	}
	values := clustersetValues("node-local")
	values["etcd"] = map[string]any{"prefix": "/east"}
	uses = append(uses, usesInManifests(t, renderChart(t, values))...)
	var missing []string
	for _, binary := range []string{"kube2sky", "skydns"} {
		if !binaries.get(t, binary, "")["clusterset-etcd-endpoints"] {
			missing = append(missing, binary)
			uses = withoutBrokerArgs(uses, binary)
		}
	}
	checkUses(t, uses)
	if len(missing) > 0 {
		t.Skipf("%s have no flag --clusterset-etcd-endpoints yet: the chart's broker flags are unchecked", strings.Join(missing, " and "))
	}
}

// withoutBrokerArgs drops the --clusterset-etcd-* args of binary's uses.
func withoutBrokerArgs(uses []use, binary string) []use {
	out := make([]use, 0, len(uses))
	for _, u := range uses {
		if u.binary == binary {
			u.args = slices.DeleteFunc(slices.Clone(u.args), isBrokerArg)
		}
		out = append(out, u)
	}
	return out
}
