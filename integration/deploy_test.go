package integration

import (
	"fmt"
	"slices"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/deploy"
	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestDeployManifestsApply applies deploy/kubernetes and deploy/examples
// to a real kube-apiserver with server-side apply, twice, and checks what
// the API server made of them, including that kubesky's RBAC grants
// reading Services and EndpointSlices, recording events, and nothing more.
func TestDeployManifestsApply(t *testing.T) {
	etcd := harness.StartEtcd(t)
	api := harness.StartAPIServer(t, etcd.Endpoint)
	applier, err := deploy.NewApplier(api.Config, "kubesky-integration")
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := deploy.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	examples, err := deploy.Examples()
	if err != nil {
		t.Fatal(err)
	}
	objs := append(manifests, examples...)

	t.Run("every manifest and example applies, and applies again unchanged", func(t *testing.T) {
		for range 2 {
			if err := applier.Apply(t.Context(), objs); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("the kube-dns Service has the cluster DNS address, both protocols and the metrics ports", func(t *testing.T) {
		svc, err := api.Client.CoreV1().Services("kube-system").Get(t.Context(), "kube-dns", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ports []string
		for _, p := range svc.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%s %s/%d", p.Name, p.Protocol, p.Port))
		}
		want := []string{"dns UDP/53", "dns-tcp TCP/53", "metrics TCP/8081", "k2s-metrics TCP/8082"}
		if svc.Spec.ClusterIP != "10.96.0.10" || !slices.Equal(ports, want) {
			t.Fatalf("clusterIP %s, ports %v; want 10.96.0.10, %v", svc.Spec.ClusterIP, ports, want)
		}
		if svc.Annotations["prometheus.io/scrape"] != "true" || svc.Annotations["prometheus.io/port"] != "8081" {
			t.Fatalf("annotations %v: want prometheus.io/scrape and prometheus.io/port for skydns", svc.Annotations)
		}
	})
	t.Run("the Deployment runs etcd, kube2sky and skydns", func(t *testing.T) {
		d, err := api.Client.AppsV1().Deployments("kube-system").Get(t.Context(), "kubesky", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range d.Spec.Template.Spec.Containers {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, []string{"etcd", "kube2sky", "skydns"}) {
			t.Fatalf("containers %v", names)
		}
	})
	t.Run("the example Service got its fixed cluster IP", func(t *testing.T) {
		svc, err := api.Client.CoreV1().Services("default").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil || svc.Spec.ClusterIP != "10.96.0.80" {
			t.Fatalf("%v, %v", svc, err)
		}
	})
	t.Run("the service account may read Services and EndpointSlices, record events, and nothing more", func(t *testing.T) {
		allowed := []authorizationv1.ResourceAttributes{
			{Verb: "list", Resource: "services"},
			{Verb: "watch", Resource: "services"},
			{Verb: "get", Resource: "services", Namespace: "default"},
			{Verb: "list", Group: "discovery.k8s.io", Resource: "endpointslices"},
			{Verb: "watch", Group: "discovery.k8s.io", Resource: "endpointslices"},
			{Verb: "create", Resource: "events", Namespace: "default"},
			{Verb: "patch", Resource: "events", Namespace: "default"},
		}
		denied := []authorizationv1.ResourceAttributes{
			{Verb: "create", Resource: "services", Namespace: "default"},
			{Verb: "list", Resource: "secrets"},
			{Verb: "list", Resource: "pods"},
			{Verb: "list", Resource: "endpoints"},
			{Verb: "update", Group: "discovery.k8s.io", Resource: "endpointslices", Namespace: "default"},
			{Verb: "delete", Resource: "events", Namespace: "default"},
		}
		checkAccess(t, api, allowed, denied)
	})
	t.Run("the optional RBAC adds pods, configmaps, events and the clusterset's objects, and no more", func(t *testing.T) {
		optional, err := deploy.Optional()
		if err != nil {
			t.Fatal(err)
		}
		if err := applier.Apply(t.Context(), optional); err != nil {
			t.Fatal(err)
		}
		allowed := []authorizationv1.ResourceAttributes{
			{Verb: "list", Resource: "pods"},
			{Verb: "watch", Resource: "pods"},
			{Verb: "watch", Resource: "configmaps"},
			{Verb: "create", Resource: "events", Namespace: "kube-system"},
			{Verb: "watch", Group: "multicluster.x-k8s.io", Resource: "serviceexports"},
			{Verb: "update", Group: "multicluster.x-k8s.io", Resource: "serviceexports", Subresource: "status", Namespace: "default"},
			{Verb: "create", Group: "multicluster.x-k8s.io", Resource: "serviceimports", Namespace: "default"},
			{Verb: "delete", Group: "discovery.k8s.io", Resource: "endpointslices", Namespace: "default"},
			{Verb: "watch", Resource: "namespaces"},
			{Verb: "get", Group: "about.k8s.io", Resource: "clusterproperties", Name: "cluster.clusterset.k8s.io"},
		}
		denied := []authorizationv1.ResourceAttributes{
			{Verb: "list", Resource: "secrets"},
			{Verb: "update", Resource: "configmaps", Namespace: "kube-system"},
			{Verb: "delete", Resource: "pods", Namespace: "default"},
			{Verb: "create", Group: "multicluster.x-k8s.io", Resource: "serviceexports", Namespace: "default"},
			{Verb: "update", Group: "multicluster.x-k8s.io", Resource: "serviceexports", Namespace: "default"},
			{Verb: "delete", Resource: "namespaces"},
			{Verb: "get", Group: "about.k8s.io", Resource: "clusterproperties", Name: "other"},
		}
		checkAccess(t, api, allowed, denied)
	})
}

// checkAccess checks that kubesky's service account may do everything in
// allowed and nothing in denied. The authorizer sees roles just applied once
// its informers have them, so the allowed checks poll; the denied ones run
// after them, against roles the authorizer already holds.
func checkAccess(t *testing.T, api *harness.APIServer, allowed, denied []authorizationv1.ResourceAttributes) {
	t.Helper()
	for _, attrs := range allowed {
		polltest.True(t, "kubesky may "+attrs.Verb+" "+attrs.Resource, func() bool { return canI(t, api, attrs) })
	}
	for _, attrs := range denied {
		if canI(t, api, attrs) {
			t.Errorf("kubesky may %s %s", attrs.Verb, attrs.Resource)
		}
	}
}

// canI asks the API server's authorizer whether kubesky's service account
// may do attrs.
func canI(t *testing.T, api *harness.APIServer, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:kube-system:kubesky",
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
		ResourceAttributes: &attrs,
	}}
	got, err := api.Client.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Status.Allowed
}

// TestSharedEtcdManifestsApply applies deploy/shared-etcd with its
// autoscale component to a real kube-apiserver with server-side apply,
// twice, and checks what the API server made of the etcd members.
func TestSharedEtcdManifestsApply(t *testing.T) {
	etcd := harness.StartEtcd(t)
	api := harness.StartAPIServer(t, etcd.Endpoint)
	applier, err := deploy.NewApplier(api.Config, "kubesky-integration")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.SharedEtcd()
	if err != nil {
		t.Fatal(err)
	}
	autoscale, err := deploy.SharedEtcdAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, autoscale...)
	t.Run("every object applies, and applies again unchanged", func(t *testing.T) {
		for range 2 {
			if err := applier.Apply(t.Context(), objs); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("each member Service has its fixed cluster IP and publishes unready members", func(t *testing.T) {
		for i, ip := range []string{"10.96.0.11", "10.96.0.12", "10.96.0.13"} {
			svc, err := api.Client.CoreV1().Services("kube-system").Get(t.Context(), fmt.Sprintf("kubesky-etcd-%d", i), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if svc.Spec.ClusterIP != ip || !svc.Spec.PublishNotReadyAddresses {
				t.Errorf("%s: clusterIP %s, publishNotReadyAddresses %v", svc.Name, svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
			}
		}
	})
	t.Run("the StatefulSet has 3 members started together, each with a volume claim", func(t *testing.T) {
		set, err := api.Client.AppsV1().StatefulSets("kube-system").Get(t.Context(), "kubesky-etcd", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *set.Spec.Replicas != 3 || set.Spec.PodManagementPolicy != "Parallel" || len(set.Spec.VolumeClaimTemplates) != 1 {
			t.Fatalf("replicas %d, policy %s, %d claim templates", *set.Spec.Replicas, set.Spec.PodManagementPolicy, len(set.Spec.VolumeClaimTemplates))
		}
	})
	t.Run("the per-pod Deployment is not part of it", func(t *testing.T) {
		if _, err := api.Client.AppsV1().Deployments("kube-system").Get(t.Context(), "kubesky", metav1.GetOptions{}); err == nil {
			t.Fatal("Deployment kubesky exists")
		}
	})
}
