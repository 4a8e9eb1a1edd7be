package deploy

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNodeLocalRenders checks that kustomize builds node-local/ into the
// objects NodeLocal reads, and builds the cluster's overlays on it.
func TestNodeLocalRenders(t *testing.T) {
	read, err := NodeLocal()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describeSorted(kustomize(t, "node-local")), describeSorted(read); !slices.Equal(got, want) {
		t.Fatalf("kustomize renders %v\nNodeLocal reads %v", got, want)
	}
	for _, overlay := range []string{"../cluster/overlay-node-local", "../cluster/overlay-shared"} {
		t.Run(overlay, func(t *testing.T) {
			for _, obj := range workloads(kustomize(t, overlay)) {
				containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
				for _, c := range containers {
					if policy := c.(map[string]any)["imagePullPolicy"]; policy != "Never" {
						t.Errorf("%s: a container's imagePullPolicy is %v, want Never", Describe(obj), policy)
					}
				}
			}
		})
	}
}

func describeSorted(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, obj := range objs {
		out = append(out, Describe(obj))
	}
	slices.Sort(out)
	return out
}

// TestNodeLocalWiring checks that the DaemonSet reads etcd through the
// relays at the address their certificate names, that one skydns reads
// the zone beside a holder sharing its peers' directory and forwarding to
// the kube-dns Service, that no container declares host ports, and that an
// update starts the new pod before the old one stops.
func TestNodeLocalWiring(t *testing.T) {
	objs, err := NodeLocal()
	if err != nil {
		t.Fatal(err)
	}
	ds := object(t, objs, "DaemonSet", "kubesky-node-local")
	relayIP := serviceClusterIP(t, objs, "kubesky-etcd-relay")
	t.Run("skydns dials the relays' Service, which their certificate names", func(t *testing.T) {
		if got, want := argValue(t, ds, "skydns", "etcd-endpoints"), "https://"+relayIP+":2379"; got != want {
			t.Errorf("skydns --etcd-endpoints=%s, want %s", got, want)
		}
		if !slices.Contains(SharedEtcdPKIFlags, "--etcd-relay-name="+relayIP) {
			t.Errorf("pki flags %v do not name the relays' %s", SharedEtcdPKIFlags, relayIP)
		}
	})
	t.Run("one skydns reads the zone; the holder shares its directory and forwards to kube-dns", func(t *testing.T) {
		containers, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
		var names []string
		for _, c := range containers {
			names = append(names, fmt.Sprint(c.(map[string]any)["name"]))
		}
		if !slices.Equal(names, []string{"skydns", "holder"}) {
			t.Fatalf("containers %v, want [skydns holder]", names)
		}
		if command := containerCommand(ds, "skydns"); !slices.Equal(command, []string{"/skydns-node"}) {
			t.Errorf("skydns runs %v, want [/skydns-node] (no etcd server linked)", command)
		}
		if got, want := argValue(t, ds, "holder", "dir"), argValue(t, ds, "skydns", "node-local-peers"); got != want {
			t.Errorf("holder --dir=%s, skydns --node-local-peers=%s: want the same", got, want)
		}
		if got, want := argValue(t, ds, "holder", "upstream"), serviceClusterIP(t, objs, "kube-dns")+":53"; got != want {
			t.Errorf("holder --upstream=%s, want the kube-dns Service %s", got, want)
		}
		for _, c := range containers {
			if ports, ok := c.(map[string]any)["ports"]; ok {
				t.Errorf("container %v declares host ports %v: an update's new pod could not join the old one on its node", c.(map[string]any)["name"], ports)
			}
		}
	})
	t.Run("an update starts the new pod before the old one stops", func(t *testing.T) {
		surge, _, _ := unstructured.NestedFieldNoCopy(ds.Object, "spec", "updateStrategy", "rollingUpdate", "maxSurge")
		unavailable, _, _ := unstructured.NestedFieldNoCopy(ds.Object, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
		if fmt.Sprint(surge) != "1" || fmt.Sprint(unavailable) != "0" {
			t.Errorf("maxSurge %v, maxUnavailable %v; want 1 and 0", surge, unavailable)
		}
	})
}

// containerCommand is the command of container in workload's pod template.
func containerCommand(workload *unstructured.Unstructured, container string) []string {
	containers, _, _ := unstructured.NestedSlice(workload.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if c := c.(map[string]any); c["name"] == container {
			return stringList(c["command"])
		}
	}
	return nil
}
