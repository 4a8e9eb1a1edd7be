package deploy

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEveryIdentityHasASecretOfItsOwn: in node-local (which holds every
// workload of shared-etcd), each workload mounts one etcd Secret, no two
// mount the same, each of its TLS flags names a key that Secret holds,
// and the DaemonSet's holds one private key, the node-local reader's.
func TestEveryIdentityHasASecretOfItsOwn(t *testing.T) {
	objs, err := NodeLocal()
	if err != nil {
		t.Fatal(err)
	}
	mountedBy := map[string]string{}
	for _, w := range workloads(objs) {
		secret, mount := etcdSecretOf(w)
		if secret == "" {
			continue
		}
		if other, ok := mountedBy[secret]; ok {
			t.Errorf("%s and %s both mount %s", other, Describe(w), secret)
		}
		mountedBy[secret] = Describe(w)
		keys, ok := EtcdSecrets[secret]
		if !ok {
			t.Errorf("%s mounts %s, which EtcdSecrets lacks", Describe(w), secret)
		}
		for _, path := range tlsPaths(w, mount) {
			if _, ok := keys[path]; !ok {
				t.Errorf("%s reads %s/%s, which %s does not hold", Describe(w), mount, path, secret)
			}
		}
	}
	if len(mountedBy) != len(EtcdSecrets) {
		t.Errorf("the workloads mount %v; EtcdSecrets has %d", mountedBy, len(EtcdSecrets))
	}
	var nodeKeys []string
	for _, file := range EtcdSecrets["kubesky-etcd-node-local"] {
		if strings.HasSuffix(file, ".key") {
			nodeKeys = append(nodeKeys, file)
		}
	}
	if !slices.Equal(nodeKeys, []string{"readers/node-local.key"}) {
		t.Errorf("the node-local Secret holds the keys %v, want the node-local reader's alone", nodeKeys)
	}
}

// etcdSecretOf is the Secret of a workload's volume mounted at a path
// under /etc that names etcd, and that path.
func etcdSecretOf(w *unstructured.Unstructured) (secret, mount string) {
	spec, _, _ := unstructured.NestedMap(w.Object, "spec", "template", "spec")
	volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
	containers, _, _ := unstructured.NestedSlice(spec, "containers")
	for _, v := range volumes {
		name, ok, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName")
		if !ok || !strings.HasPrefix(name, "kubesky-etcd-") {
			continue
		}
		for _, c := range containers {
			mounts, _, _ := unstructured.NestedSlice(c.(map[string]any), "volumeMounts")
			for _, m := range mounts {
				if m.(map[string]any)["name"] == v.(map[string]any)["name"] {
					return name, m.(map[string]any)["mountPath"].(string)
				}
			}
		}
	}
	return "", ""
}

// tlsPaths are the file names under mount that the workload's containers'
// flags name.
func tlsPaths(w *unstructured.Unstructured, mount string) []string {
	var out []string
	containers, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		for _, arg := range stringList(c.(map[string]any)["args"]) {
			if _, value, ok := strings.Cut(arg, "="+mount+"/"); ok {
				out = append(out, strings.TrimSpace(stripComment(value)))
			}
		}
	}
	return out
}
