package deploy

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMetricsPortsAreAnnounced checks that Prometheus finds both daemons'
// /metrics the usual ways: the kube-dns Service and the pods carry the
// prometheus.io annotations for skydns's HTTP port, and the Service has
// the named ports metrics (skydns) and k2s-metrics (kube2sky), each
// targeting a container port of that name whose number is the container's
// --http-addr port.
func TestMetricsPortsAreAnnounced(t *testing.T) {
	objs, err := Manifests()
	if err != nil {
		t.Fatal(err)
	}
	deployment := object(t, objs, "Deployment", "kubesky")
	service := object(t, objs, "Service", "kube-dns")
	httpPorts := containerHTTPPorts(t, deployment)
	want := map[string]string{"metrics": "skydns", "k2s-metrics": "kube2sky"}
	for portName, container := range want {
		t.Run(portName+" is "+container+"'s --http-addr", func(t *testing.T) {
			port, ok := httpPorts[portName]
			if !ok || port.container != container {
				t.Fatalf("no container port %s on %s (found %v)", portName, container, httpPorts)
			}
			if port.number != port.httpAddrPort {
				t.Fatalf("containerPort %d, --http-addr port %d", port.number, port.httpAddrPort)
			}
			if target := servicePortTarget(service, portName); target != portName {
				t.Fatalf("Service kube-dns port %s targets %q, want the named port %s", portName, target, portName)
			}
		})
	}
	skydnsPort := strconv.Itoa(int(httpPorts["metrics"].number))
	for _, obj := range []*unstructured.Unstructured{service, podTemplate(t, deployment)} {
		annotations := obj.GetAnnotations()
		if annotations["prometheus.io/scrape"] != "true" || annotations["prometheus.io/port"] != skydnsPort {
			t.Errorf("%s %s: annotations %v, want prometheus.io/scrape \"true\" and prometheus.io/port %q",
				obj.GetKind(), obj.GetName(), annotations, skydnsPort)
		}
	}
}

// namedPort is a container port and what serves it.
type namedPort struct {
	container    string
	number       int64
	httpAddrPort int64 // the port of the container's --http-addr, 0 if none
}

func containerHTTPPorts(t *testing.T, deployment *unstructured.Unstructured) map[string]namedPort {
	t.Helper()
	ports := map[string]namedPort{}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		c := c.(map[string]any)
		name, _, _ := unstructured.NestedString(c, "name")
		args, _, _ := unstructured.NestedStringSlice(c, "args")
		httpPort := flagPort(args, "--http-addr")
		list, _, _ := unstructured.NestedSlice(c, "ports")
		for _, p := range list {
			p := p.(map[string]any)
			portName, _, _ := unstructured.NestedString(p, "name")
			number, _ := toInt64(p["containerPort"])
			ports[portName] = namedPort{container: name, number: number, httpAddrPort: httpPort}
		}
	}
	return ports
}

// flagPort is the port of the host:port value of flag in args, 0 if the
// flag is missing.
func flagPort(args []string, flag string) int64 {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			n, _ := strconv.ParseInt(v[strings.LastIndexByte(v, ':')+1:], 10, 64)
			return n
		}
	}
	return 0
}

// toInt64 is a decoded YAML number as an int64.
func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func servicePortTarget(service *unstructured.Unstructured, name string) string {
	ports, _, _ := unstructured.NestedSlice(service.Object, "spec", "ports")
	for _, p := range ports {
		p := p.(map[string]any)
		if p["name"] == name {
			target, _ := p["targetPort"].(string)
			return target
		}
	}
	return ""
}

func podTemplate(t *testing.T, deployment *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	template, ok, _ := unstructured.NestedMap(deployment.Object, "spec", "template")
	if !ok {
		t.Fatal("the Deployment has no pod template")
	}
	u := &unstructured.Unstructured{Object: template}
	u.SetKind("Pod template of")
	u.SetName(deployment.GetName())
	return u
}

func object(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}
