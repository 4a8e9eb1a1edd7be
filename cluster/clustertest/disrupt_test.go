package clustertest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// etcdMember0 is the first member's client URL (its Service's fixed IP).
const etcdMember0 = "https://10.96.0.11:2379"

// The lookup pod's pace: lookupsPerSecond lookups, lookupPauseUS apart
// (busybox usleep), then a wait for the next second of the clock.
const (
	lookupsPerSecond = 20
	lookupPauseUS    = 15000
)

// disruptUnderLoad runs the lookups and the churn, deletes the etcd leader,
// the kube2sky leader and a skydns pod in turn, each once the one before
// has been replaced, and checks that no lookup failed and no change was
// lost or late.
func disruptUnderLoad(t *testing.T, c *cluster.Cluster) {
	createService(t, c, "web")
	polltest.Every(t, time.Minute, apiPoll, "web resolving", func() error { return resolves(t, c, "web.default.svc.cluster.local.") })
	lookupsStart := startLookups(t, c, "load-shared")
	waitForLog(t, c, "load-shared", func(log string) bool { return strings.Count(log, "\n") >= 40 })

	ctx, stop := context.WithCancel(t.Context())
	ch := &churn{t: t, c: c}
	done := make(chan struct{})
	go func() { ch.run(ctx); close(done) }()
	start := time.Now()
	defer func() { stop(); <-done }()
	time.Sleep(5 * time.Second) // churn and lookups before the first deletion: a duration, not a wait for a condition

	for _, step := range []struct {
		component string
		want      int
		pick      func() []string
	}{
		{"etcd", 3, func() []string { return etcdLeaders(t, c) }},
		{"kube2sky", 2, func() []string { return kube2skyLeaders(t, c) }},
		{"skydns", 2, func() []string { return podNames(readyPods(t, c, "skydns")) }},
	} {
		var victims []string
		polltest.Every(t, time.Minute, apiPoll, "a "+step.component+" pod to delete", func() error {
			if victims = step.pick(); len(victims) == 0 {
				return fmt.Errorf("no %s pod to delete yet", step.component)
			}
			return nil
		})
		took := deleteAndWait(t, c, step.component, victims[0], step.want)
		t.Logf("%s pod %s deleted; replaced and every workload whole again %s later", step.component, victims[0], took.Round(100*time.Millisecond))
		time.Sleep(3 * time.Second) // load on the healed topology before the next deletion: a duration
	}
	stop()
	<-done
	churnTime := time.Since(start)
	ch.report(t)
	t.Logf("churn ran %s: %.1f changes a second", churnTime.Round(time.Second), float64(len(ch.delays)+len(ch.lost))/churnTime.Seconds())
	countLookups(t, c, "load-shared", lookupsStart)
}

// createService creates a ClusterIP Service without a selector in default.
func createService(t *testing.T, c *cluster.Cluster, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if _, err := c.Client.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// resolves is nil once the kube-dns Service answers name with an address.
func resolves(t *testing.T, c *cluster.Cluster, name string) error {
	reply, err := c.Exchange(t.Context(), cluster.DNSPort(c.Cfg().Addresses().ClusterDNS), name, dns.TypeA)
	if err != nil {
		return err
	}
	if len(reply.Answer) == 0 {
		return fmt.Errorf("%s: %s, no answer", name, dns.RcodeToString[reply.Rcode])
	}
	return nil
}

// startLookups starts a busybox pod that resolves web.default 20 times a
// second (fewer if a lookup takes longer than a twentieth of a second)
// until it is deleted, printing ok or FAIL per lookup, and returns when it
// was ready.
func startLookups(t *testing.T, c *cluster.Cluster, name string) time.Time {
	t.Helper()
	script := fmt.Sprintf(`while true; do s=$(date +%%s); i=0
  while [ $i -lt %d ]; do
    if nslookup web.default.svc.cluster.local >/dev/null 2>&1; then echo ok; else echo FAIL $(date +%%T); fi
    i=$((i+1)); usleep %d
  done
  while [ "$(date +%%s)" = "$s" ]; do usleep 10000; done
done`, lookupsPerSecond, lookupPauseUS)
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: %s, imagePullPolicy: Never, command: ["sh", "-c", %q]}]
`, name, cluster.ClientImage, script)
	kubectl(t, c, []byte(pod), "apply", "-f", "-")
	waitPodsReady(t, c, name)
	return time.Now()
}

// countLookups reads the lookup pod's log, fails on a failed lookup, and
// deletes the pod.
func countLookups(t *testing.T, c *cluster.Cluster, name string, start time.Time) {
	t.Helper()
	log := waitForLog(t, c, name, func(string) bool { return true })
	ok, failed := strings.Count(log, "ok\n"), strings.Count(log, "FAIL")
	elapsed := time.Since(start)
	t.Logf("lookups from a pod: %d in %s (%.1f a second), %d failed", ok+failed, elapsed.Round(time.Second), float64(ok+failed)/elapsed.Seconds(), failed)
	if failed != 0 {
		t.Errorf("%d of %d lookups failed:\n%s", failed, ok+failed, grepFail(log))
	}
	if err := c.Client.CoreV1().Pods("default").Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
}

func podNames(pods []corev1.Pod) []string {
	var names []string
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return names
}

// checkEtcdTLS reads a member's /health over TLS with kube2sky's client
// certificate, and checks the member refuses a client without one.
func checkEtcdTLS(t *testing.T, c *cluster.Cluster) {
	secret := etcdSecret(t, c, "kubesky-etcd-kube2sky")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(secret.Data["ca.crt"])
	pair, err := tls.X509KeyPair(secret.Data["client.crt"], secret.Data["client.key"])
	if err != nil {
		t.Fatal(err)
	}
	body, err := httpGet(t, c, etcdMember0+"/health", &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}})
	if err != nil || !strings.Contains(body, `"health":"true"`) {
		t.Errorf("/health with the client certificate: %q, %v", body, err)
	}
	if _, err := httpGet(t, c, etcdMember0+"/health", &tls.Config{RootCAs: roots}); err == nil {
		t.Error("etcd answered a client without a certificate")
	} else {
		t.Logf("without a client certificate: %v", err)
	}
}

// etcdSecret is one identity's etcd Secret (deploy.EtcdSecrets).
func etcdSecret(t *testing.T, c *cluster.Cluster, name string) *corev1.Secret {
	t.Helper()
	secret, err := c.Client.CoreV1().Secrets("kube-system").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// httpGet fetches url from inside the cluster's network namespace and
// returns the body of a 200 answer.
func httpGet(t *testing.T, c *cluster.Cluster, url string, tlsConfig *tls.Config) (string, error) {
	t.Helper()
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DialContext: cluster.DialInNetNS(c.Cfg().ClientNetNS()), TLSClientConfig: tlsConfig, DisableKeepAlives: true},
	}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(body), nil
}
