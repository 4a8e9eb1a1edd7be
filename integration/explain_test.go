package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// explainTimeout bounds how long a name takes to reach skydns, and a run of
// kubesky explain.
const explainTimeout = 20 * time.Second

// TestExplainTracesEveryKindOfName runs bin/kubesky explain against the
// whole pipeline for a ClusterIP Service, a headless one, an ExternalName,
// PTR names, a name that does not exist, a record added by hand with
// etcdctl, and a record changed behind kube2sky's back.
func TestExplainTracesEveryKindOfName(t *testing.T) {
	harness.RequireBinaries(t, "kubesky", "etcdctl")
	s := startStack(t, stackOptions{})
	webIP := createService(t, s.kube, "default", "web", "")
	createHeadlessDB(t, s)
	createExternalName(t, s, "ext", "db.example.com")
	s.dnsEtcd.Ctl("put", "/skydns/local/cluster/svc/default/hand/x1", `{"host":"10.0.0.1"}`)
	waitAnswer(t, s.skydns.DNSAddr, serviceName("default", "web"), dns.TypeA, webIP)
	waitAnswer(t, s.skydns.DNSAddr, "db-0.db.default.svc.cluster.local.", dns.TypeA, "10.244.1.7")
	replica := "--dns=" + s.skydns.DNSAddr + ",http=" + s.skydns.HTTPAddr
	webRV := resourceVersion(t, s, "web")

	t.Run("a ClusterIP Service: its keys, its resourceVersion, in sync, and the replica's answer", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", "web.default.svc.cluster.local", replica)
		mustContain(t, out,
			"owner kube2sky.cluster.local",
			"Service default/web, resourceVersion "+webRV+", EndpointSlices ",
			"in sync: etcd holds the 2 records the builder gives", // the A and the SRV below the name
			"NOERROR, 1 record; applied revision",
			"web.default.svc.cluster.local. 30 IN A "+webIP)
	})
	t.Run("a headless Service: one key per endpoint and port, its EndpointSlice", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", "db.default.svc.cluster.local", replica)
		mustContain(t, out,
			"/skydns/local/cluster/svc/default/db/db-0\n",
			"/skydns/local/cluster/svc/default/db/_tcp/_pg/db-0\n",
			"EndpointSlices db-1@",
			"in sync: etcd holds the 2 records the builder gives",
			"db.default.svc.cluster.local. 30 IN A 10.244.1.7")
	})
	t.Run("an ExternalName: one CNAME key", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", "ext.default.svc.cluster.local", "CNAME", replica)
		mustContain(t, out, "Service default/ext, resourceVersion", "in sync: etcd holds the 1 record the builder gives",
			"ext.default.svc.cluster.local. 30 IN CNAME db.example.com.")
	})
	t.Run("a PTR of an endpoint stands for the Service its target names", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", "10.244.1.7", replica)
		mustContain(t, out, "7.1.244.10.in-addr.arpa. PTR\n",
			"1 key at /skydns/arpa/in-addr/10/244/1/7\n", "Service default/db, resourceVersion",
			"in sync: etcd holds the 1 record the builder gives",
			"7.1.244.10.in-addr.arpa. 30 IN PTR db-0.db.default.svc.cluster.local.")
	})
	t.Run("a PTR of a cluster IP", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", webIP, replica)
		mustContain(t, out, "Service default/web, resourceVersion "+webRV, "in sync: etcd holds the 1 record",
			"IN PTR web.default.svc.cluster.local.")
	})
	t.Run("a name that does not exist: no key, no Service, NXDOMAIN", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", "nope.default.svc.cluster.local", replica)
		mustContain(t, out, "no key at and below /skydns/local/cluster/svc/default/nope, so the name does not exist",
			"Service default/nope: not in the API, and kube2sky owns no key for it", "NXDOMAIN, 0 records")
	})
	t.Run("a record added by hand with etcdctl has no owner and is served", func(t *testing.T) {
		out := explainUntil(t, s, "(current)", "hand.default.svc.cluster.local", replica)
		mustContain(t, out, "/skydns/local/cluster/svc/default/hand/x1\n      {\"host\":\"10.0.0.1\"}\n",
			"no owner: added by hand, kube2sky leaves it alone", "hand.default.svc.cluster.local. 30 IN A 10.0.0.1")
	})
	t.Run("an owned key changed behind kube2sky's back is drift, with both values", func(t *testing.T) {
		key := keyOf(t, s, "/skydns/local/cluster/svc/default/web/", `"host":"`+webIP+`"`)
		s.dnsEtcd.Ctl("put", key, `{"host":"10.96.99.99","ttl":30,"owner":"kube2sky.cluster.local"}`)
		out := explainUntil(t, s, "(current)", "web.default.svc.cluster.local", replica)
		mustContain(t, out, "DRIFT: 1 same, 0 missing, 0 extra, 1 changed",
			"changed "+key+"\n        etcd  {\"host\":\"10.96.99.99\",\"ttl\":30,\"owner\":\"kube2sky.cluster.local\"}\n"+
				"        built {\"host\":\""+webIP+"\",\"ttl\":30,\"owner\":\"kube2sky.cluster.local\"}",
			"web.default.svc.cluster.local. 30 IN A 10.96.99.99")
	})
	t.Run("with a kubeconfig and no --dns the replicas are the DNS Service's endpoints", func(t *testing.T) {
		// The API refuses loopback endpoints, and test servers listen on
		// 127.0.0.1 only: the endpoint is a documentation address nothing
		// answers on, which shows that it was found and asked.
		createDNSService(t, s, "192.0.2.53")
		out := explainUntil(t, s, "192.0.2.53:1053", "ext.default.svc.cluster.local", "--timeout=1s")
		mustContain(t, out, "\n  192.0.2.53:1053  no answer: ", "applied revision unknown: Get \"http://192.0.2.53:8081/metrics\"")
	})
}

// explainUntil runs bin/kubesky explain with the stack's etcd and
// kubeconfig and args until its output contains want, and returns it.
func explainUntil(t *testing.T, s *stack, want string, args ...string) string {
	t.Helper()
	var out string
	polltest.Within(t, explainTimeout, "kubesky explain "+strings.Join(args, " ")+" saying "+want, func() error {
		var err error
		if out, err = runExplain(t.Context(), s, args...); err != nil {
			return err
		}
		if !strings.Contains(out, want) {
			return fmt.Errorf("the report does not say %q:\n%s", want, out)
		}
		return nil
	})
	t.Logf("kubesky explain %s:\n%s", strings.Join(args, " "), out)
	return out
}

func runExplain(ctx context.Context, s *stack, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary("kubesky"), append([]string{"explain",
		"--etcd-endpoints=" + s.dnsEtcd.Endpoint, "--kubeconfig=" + s.api.Kubeconfig}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("kubesky explain: %v: %s", err, stderr.String())
	}
	return string(out), nil
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("the report does not say %q", w)
		}
	}
}

// createHeadlessDB creates the headless Service default/db with an
// EndpointSlice db-1: endpoint db-0 at 10.244.1.7 on port pg.
func createHeadlessDB(t *testing.T, s *stack) {
	t.Helper()
	svc := selectorlessHeadless("default", "db", corev1.ServicePort{Name: "pg", Port: 80})
	if _, err := s.kube.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := ipv4Slice("default", "db", "db-1", []string{"pg"}, endpoint("10.244.1.7", "db-0"))
	if _, err := s.kube.DiscoveryV1().EndpointSlices("default").Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createExternalName(t *testing.T, s *stack, name, target string) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: target}}
	if _, err := s.kube.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createDNSService creates kube-system/kube-dns without a selector and an
// EndpointSlice with one ready endpoint at addr, DNS on port 1053 ("dns")
// and HTTP on 8081 ("metrics").
func createDNSService(t *testing.T, s *stack, addr string) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "metrics", Port: 8081}}}}
	if _, err := s.kube.CoreV1().Services("kube-system").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns-1", Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{endpoint(addr, "")},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("dns"), Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To[int32](1053)},
			{Name: ptr.To("metrics"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8081)},
		},
	}
	if _, err := s.kube.DiscoveryV1().EndpointSlices("kube-system").Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func resourceVersion(t *testing.T, s *stack, name string) string {
	t.Helper()
	svc, err := s.kube.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.ResourceVersion
}

// keyOf is the key under prefix whose value contains substr.
func keyOf(t *testing.T, s *stack, prefix, substr string) string {
	t.Helper()
	out := s.dnsEtcd.Ctl("get", "--prefix", prefix)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		if strings.Contains(lines[i+1], substr) && !strings.Contains(lines[i], "/_") {
			return lines[i]
		}
	}
	t.Fatalf("no key under %s with %s:\n%s", prefix, substr, out)
	return ""
}
