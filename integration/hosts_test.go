package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The host records (--hosts-configmap) and pod records (--pod-records)
// through the real kube-apiserver: kube2sky's informers with their field
// selectors, the Txn into etcd, skydns's answers.

// hostsTimeout bounds each wait for an answer to change; the figures logged
// show how long it really took.
const hostsTimeout = 10 * time.Second

func TestHostsAndPodRecordsThroughTheAPIServer(t *testing.T) {
	s := startStack(t, stackOptions{
		kube2skyArgs: []string{"--hosts-configmap=kube-system/hosts", "--hosts-domain=example.corp", "--pod-records=verified"},
		skydnsArgs:   []string{"--zone=cluster.local.", "--zone=example.corp.", "--pod-records=verified"},
	})
	dnsAddr := s.skydns.DNSAddr
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hosts"},
		Data:       map[string]string{"hosts": "10.0.0.5 db1.example.corp db1 # primary\n"},
	}
	t.Run("a new ConfigMap is served under hosts.<zone>, the extra domain and in-addr.arpa", func(t *testing.T) {
		start := time.Now()
		createConfigMap(t, s.kube, cm)
		waitAnswer(t, dnsAddr, "db1.hosts.cluster.local.", dns.TypeA, "10.0.0.5")
		t.Logf("hosts: a new ConfigMap answered after %v", time.Since(start))
		waitAnswer(t, dnsAddr, "db1.example.corp.", dns.TypeA, "10.0.0.5")
		waitAnswer(t, dnsAddr, "5.0.0.10.in-addr.arpa.", dns.TypePTR, "db1.example.corp.")
	})
	t.Run("an edit with a bad line changes the answers, and the bad line is reported", func(t *testing.T) {
		cm.Data = map[string]string{"hosts": "10.0.0.6 db1\n10.0.0.x db9\n", "more": "fd00::8 db8\n"}
		start := time.Now()
		updateConfigMap(t, s.kube, cm)
		waitAnswer(t, dnsAddr, "db1.hosts.cluster.local.", dns.TypeA, "10.0.0.6")
		t.Logf("hosts: an edit answered after %v", time.Since(start))
		waitAnswer(t, dnsAddr, "db8.example.corp.", dns.TypeAAAA, "fd00::8")
		waitAnswer(t, dnsAddr, "db9.hosts.cluster.local.", dns.TypeA) // NXDOMAIN
		ev := waitHostsEvent(t, s.kube)
		if !strings.Contains(ev.Message, `data[hosts] line 2 "10.0.0.x db9"`) || ev.Type != corev1.EventTypeWarning || ev.Source.Component != "kube2sky" {
			t.Errorf("event %s from %q: %q; want a kube2sky warning naming data[hosts] line 2", ev.Type, ev.Source.Component, ev.Message)
		}
		if got := s.kube2sky.Metric("kube2sky_hosts_invalid_lines"); got != 1 {
			t.Errorf("kube2sky_hosts_invalid_lines = %v, want 1", got)
		}
	})
	t.Run("deleting the ConfigMap removes its names", func(t *testing.T) {
		start := time.Now()
		if err := s.kube.CoreV1().ConfigMaps("kube-system").Delete(t.Context(), "hosts", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAnswer(t, dnsAddr, "db1.hosts.cluster.local.", dns.TypeA)
		t.Logf("hosts: a deletion answered after %v", time.Since(start))
		waitAnswer(t, dnsAddr, "db8.example.corp.", dns.TypeAAAA)
	})
	t.Run("a running pod is verified, a host-network one is not, a deleted one goes", func(t *testing.T) {
		createRunningPod(t, s.kube, "web", false, "10.244.1.5")
		createRunningPod(t, s.kube, "host", true, "10.244.1.6")
		waitAnswer(t, dnsAddr, "10-244-1-5.default.pod.cluster.local.", dns.TypeA, "10.244.1.5")
		waitAnswer(t, dnsAddr, "10-244-1-6.default.pod.cluster.local.", dns.TypeA)
		waitAnswer(t, dnsAddr, "10-244-1-5.other.pod.cluster.local.", dns.TypeA)
		err := s.kube.CoreV1().Pods("default").Delete(t.Context(), "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil {
			t.Fatal(err)
		}
		waitAnswer(t, dnsAddr, "10-244-1-5.default.pod.cluster.local.", dns.TypeA)
	})
}

// createConfigMap creates cm, retrying while its namespace is still being
// created by the API server.
func createConfigMap(t *testing.T, kube kubernetes.Interface, cm *corev1.ConfigMap) {
	t.Helper()
	harness.Eventually(t, hostsTimeout, func() error {
		_, err := kube.CoreV1().ConfigMaps(cm.Namespace).Create(t.Context(), cm, metav1.CreateOptions{})
		return err
	})
}

func updateConfigMap(t *testing.T, kube kubernetes.Interface, cm *corev1.ConfigMap) {
	t.Helper()
	if _, err := kube.CoreV1().ConfigMaps(cm.Namespace).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating configmap: %v", err)
	}
}

// createRunningPod creates a pod in default bound to the stack's node and
// gives it a running status with ips.
func createRunningPod(t *testing.T, kube kubernetes.Interface, name string, hostNetwork bool, ips ...string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{NodeName: nodeName, HostNetwork: hostNetwork,
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/none"}}},
	}
	if _, err := kube.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	harness.SetPodStatus(t, kube, "default", name, true, ips...)
}

// waitAnswer polls qname over UDP and TCP until its answer holds exactly
// want (A, AAAA or PTR data; none means NXDOMAIN).
func waitAnswer(t *testing.T, addr, qname string, qtype uint16, want ...string) {
	t.Helper()
	polltest.Within(t, hostsTimeout, qname+" "+dns.TypeToString[qtype], func() error {
		return answersNow(addr, qname, qtype, want)
	})
}

func answersNow(addr, qname string, qtype uint16, want []string) error {
	for _, transport := range harness.Transports {
		reply, err := harness.Query(addr, transport, qname, qtype)
		if err != nil {
			return err
		}
		wantRcode := dns.RcodeSuccess
		if len(want) == 0 {
			wantRcode = dns.RcodeNameError
		}
		got := rdata(reply.Answer)
		if reply.Rcode != wantRcode || !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			return fmt.Errorf("over %s: %s %v, want %s %v", transport, dns.RcodeToString[reply.Rcode], got, dns.RcodeToString[wantRcode], want)
		}
	}
	return nil
}

func rdata(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		switch r := rr.(type) {
		case *dns.A:
			out = append(out, r.A.String())
		case *dns.AAAA:
			out = append(out, r.AAAA.String())
		case *dns.PTR:
			out = append(out, r.Ptr)
		default:
			out = append(out, rr.String())
		}
	}
	slices.Sort(out)
	return out
}

// waitHostsEvent waits for kube2sky's InvalidHostsLines event on the hosts
// ConfigMap and returns it.
func waitHostsEvent(t *testing.T, kube kubernetes.Interface) corev1.Event {
	t.Helper()
	return waitConfigMapEvent(t, kube, "hosts", "InvalidHostsLines")
}
