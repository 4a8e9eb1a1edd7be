package composetest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// haLease is the kube2sky replicas' --leader-elect-lease-duration in
// docker-compose.ha.yml.
const haLease = 5 * time.Second

// haPorts are the host ports of docker-compose.ha.yml.
var haPorts = []string{
	"KUBESKY_DNS1_PORT", "KUBESKY_DNS2_PORT", "KUBESKY_SKYDNS1_HTTP_PORT", "KUBESKY_SKYDNS2_HTTP_PORT",
	"KUBESKY_KUBE2SKY1_HTTP_PORT", "KUBESKY_KUBE2SKY2_HTTP_PORT",
	"KUBESKY_ETCD1_PORT", "KUBESKY_ETCD2_PORT", "KUBESKY_ETCD3_PORT", "KUBESKY_APISERVER_PORT",
}

// TestComposeHA brings docker-compose.ha.yml up, with etcd on TLS and
// auth. It checks that each etcd user holds only its role and that a
// daemon given credentials etcd rejects exits at once. Then it restarts every
// skydns and kube2sky replica in turn while a client that routes by
// /readyz (as a Service does) asks 200 questions a second, none of which
// may fail. Then, with queries running against both skydns replicas, it
// stops one etcd member, then the kube2sky
// leader, then one skydns. After each stop a new Service must reach DNS;
// throughout, the known names must keep answering (from skydns-2 to the
// end, from skydns-1 until it is stopped), and etcd must see every record
// written once: no rewrite of an unchanged value, no delete.
func TestComposeHA(t *testing.T) {
	s := newStack(t, "docker-compose.ha.yml", "kubesky-test-ha", haPorts...)
	s.up()
	dns1, dns2 := s.addr("KUBESKY_DNS1_PORT"), s.addr("KUBESKY_DNS2_PORT")
	kube2sky := map[string]string{
		"kube2sky-1": "http://" + s.addr("KUBESKY_KUBE2SKY1_HTTP_PORT") + "/readyz",
		"kube2sky-2": "http://" + s.addr("KUBESKY_KUBE2SKY2_HTTP_PORT") + "/readyz",
	}
	s.waitExited("loader", startTimeout)
	for _, port := range []string{"KUBESKY_SKYDNS1_HTTP_PORT", "KUBESKY_SKYDNS2_HTTP_PORT"} {
		waitHTTP(t, "http://"+s.addr(port)+"/readyz", http.StatusOK, "ok", startTimeout)
	}
	for _, url := range kube2sky {
		waitHTTP(t, url, http.StatusOK, "ok", startTimeout)
	}
	waitAnswers(t, dns1, exampleAnswers, time.Minute)
	waitAnswers(t, dns2, exampleAnswers, time.Minute)
	creds := copyEtcdCreds(t, s, "skydns", "kube2sky", "kube-apiserver")

	t.Run("each etcd user holds only its role", func(t *testing.T) {
		checkLeastPrivilege(t, creds)
		checkBadCredentialsFailFast(t, s)
	})

	t.Run("a client following readiness sees no failure while every replica restarts in turn", func(t *testing.T) {
		skydnsReady := map[string]string{
			"skydns-1": "http://" + s.addr("KUBESKY_SKYDNS1_HTTP_PORT") + "/readyz",
			"skydns-2": "http://" + s.addr("KUBESKY_SKYDNS2_HTTP_PORT") + "/readyz",
		}
		routed := startRoutedClient(t, replica{"skydns-1", dns1, skydnsReady["skydns-1"]},
			replica{"skydns-2", dns2, skydnsReady["skydns-2"]})
		rollingRestart(t, s, skydnsReady, "skydns-1", "skydns-2")
		for range kube2sky { // each replica leads once and is stopped
			if took := handOver(t, s, kube2sky); took > haLease {
				t.Errorf("kube2sky handover took %v, longer than the %v lease: the stopped leader did not resign", took, haLease)
			}
		}
		routed.stop()
		sent, failed, served := routed.results()
		t.Logf("rolling restart: %d queries sent at %d/s, %d failed; answered by replica: %v", sent, routedQPS, len(failed), served)
		if len(failed) > 0 {
			t.Errorf("%d of %d queries failed; the first: %v", len(failed), sent, failed[:min(len(failed), maxFailuresShown)])
		}
		if served["skydns-1"] == 0 || served["skydns-2"] == 0 {
			t.Errorf("answers by replica %v: the client did not use both", served)
		}
	})

	client := haClient(t, s)
	writes := watchWrites(t, creds)
	q1, q2 := startQuerying(t, dns1), startQuerying(t, dns2)

	t.Run("with one etcd member stopped a new Service reaches both skydns", func(t *testing.T) {
		s.stop("etcd1")
		createAndResolve(t, client, "ha-1", dns1, dns2)
	})
	t.Run("with the kube2sky leader stopped the other replica takes over", func(t *testing.T) {
		leader := findLeader(t, kube2sky)
		s.stop(leader)
		for name, url := range kube2sky {
			if name != leader {
				waitHTTP(t, url, http.StatusOK, "leader", time.Minute)
			}
		}
		createAndResolve(t, client, "ha-2", dns1, dns2)
	})
	t.Run("with one skydns stopped the other keeps answering", func(t *testing.T) {
		q1.stop() // skydns-1's answers count until here
		s.stop("skydns-1")
		createAndResolve(t, client, "ha-3", dns2)
	})
	q2.stop()

	t.Run("known names answered throughout", func(t *testing.T) {
		for _, q := range []*querier{q1, q2} {
			ok, failed := q.results()
			t.Logf("%s: %d queries answered, %d failed", q.addr, ok, len(failed))
			if ok == 0 || len(failed) > 0 {
				t.Errorf("%s: %d answered; failures: %v", q.addr, ok, failed)
			}
		}
	})
	t.Run("every record was written once and nothing was deleted", func(t *testing.T) {
		w := writes.stop()
		for _, name := range []string{"ha-1", "ha-2", "ha-3"} {
			prefix := "/skydns/local/cluster/svc/default/" + name + "/"
			if n := w.putsUnder(prefix); n != 2 { // the A record and the SRV record of port http
				t.Errorf("%s: %d puts under %s, want 2", name, n, prefix)
			}
		}
		if len(w.rewrites) > 0 || len(w.deletes) > 0 {
			t.Errorf("rewrites of unchanged values: %v; deletes: %v", w.rewrites, w.deletes)
		}
	})
}

// haClient is a clientset for the stack's API server, from the host
// kubeconfig the pki service wrote.
func haClient(t *testing.T, s *stack) kubernetes.Interface {
	t.Helper()
	path := s.copyFrom("kube-apiserver", "/pki/kubeconfig-host", t.TempDir())
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfigOrDie(cfg)
}

// createAndResolve creates a ClusterIP Service and waits until every DNS
// server answers its A record with the cluster IP.
func createAndResolve(t *testing.T, client kubernetes.Interface, name string, servers ...string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	created, err := client.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	want := expectation{name + ".default.svc.cluster.local.", dns.TypeA, []string{created.Spec.ClusterIP}}
	for _, addr := range servers {
		waitAnswers(t, addr, []expectation{want}, 90*time.Second)
	}
	t.Logf("%s (%s) answered by %v after %s", name, created.Spec.ClusterIP, servers, time.Since(start).Round(10*time.Millisecond))
}

// findLeader returns the kube2sky replica whose /readyz says it leads.
func findLeader(t *testing.T, replicas map[string]string) string {
	t.Helper()
	for name, url := range replicas {
		_, body, err := httpGet(t.Context(), url)
		if err == nil && strings.Contains(body, "leader") {
			return name
		}
	}
	t.Fatal(fmt.Sprintf("no kube2sky replica leads: %v", replicas))
	return ""
}
