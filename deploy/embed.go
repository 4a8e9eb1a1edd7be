package deploy

import (
	"embed"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

//go:embed examples/*.yaml kubernetes/*.yaml optional/*.yaml shared-etcd/*.yaml shared-etcd/autoscale/*.yaml node-local/*.yaml
var files embed.FS

// KustomizationFile is the name of kustomize's file, which is not a
// Kubernetes object and is skipped by ReadDir.
const KustomizationFile = "kustomization.yaml"

// Examples returns the example Services and EndpointSlices of examples/, in
// file-name order.
func Examples() ([]*unstructured.Unstructured, error) {
	return ReadDir(files, "examples")
}

// Manifests returns the objects of kubernetes/ (the kube-dns replacement),
// in file-name order, without the kustomization.
func Manifests() ([]*unstructured.Unstructured, error) {
	return ReadDir(files, "kubernetes")
}

// SharedEtcd returns the objects `kubectl apply -k shared-etcd` makes,
// without the autoscale component: those of kubernetes/ except its
// Deployment and PodDisruptionBudget (the per-pod topology), then those of
// shared-etcd/ in file-name order.
func SharedEtcd() ([]*unstructured.Unstructured, error) {
	base, err := Manifests()
	if err != nil {
		return nil, err
	}
	base = slices.DeleteFunc(base, replacedBySharedEtcd)
	own, err := ReadDir(files, "shared-etcd")
	if err != nil {
		return nil, err
	}
	return append(base, own...), nil
}

// replacedBySharedEtcd is whether shared-etcd's patches delete obj from
// kubernetes/.
func replacedBySharedEtcd(obj *unstructured.Unstructured) bool {
	kind := obj.GetKind()
	return obj.GetName() == "kubesky" && (kind == "Deployment" || kind == "PodDisruptionBudget")
}

// NodeLocal returns the objects `kubectl apply -k node-local` makes: those
// of SharedEtcd (the relays among them), then those of node-local/ (the
// DaemonSet) in file-name order.
func NodeLocal() ([]*unstructured.Unstructured, error) {
	shared, err := SharedEtcd()
	if err != nil {
		return nil, err
	}
	own, err := ReadDir(files, "node-local")
	if err != nil {
		return nil, err
	}
	return append(shared, own...), nil
}

// SharedEtcdAutoscale returns the objects of shared-etcd's autoscale
// component (an HPA for skydns).
func SharedEtcdAutoscale() ([]*unstructured.Unstructured, error) {
	return ReadDir(files, "shared-etcd/autoscale")
}

// Optional returns the objects of optional/: the extra RBAC that kube2sky's
// --pod-records=verified and --hosts-configmap need, in file-name order.
func Optional() ([]*unstructured.Unstructured, error) {
	return ReadDir(files, "optional")
}

// ReadDir decodes every *.yaml and *.yml file of dir in fsys except
// KustomizationFile, in file-name order.
func ReadDir(fsys fs.FS, dir string) ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, name := range manifestNames(entries) {
		p := path.Join(dir, name)
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		decoded, err := Decode(p, data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, decoded...)
	}
	return objs, nil
}

func manifestNames(entries []fs.DirEntry) []string {
	var names []string
	for _, e := range entries {
		name := e.Name()
		isYAML := strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
		if !e.IsDir() && isYAML && name != KustomizationFile {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
