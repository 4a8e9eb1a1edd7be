package composetest

import (
	"net/http"
	"testing"
	"time"
)

// TestCompose brings docker-compose.yml up, checks the example answers from
// the host, stops etcd and checks skydns keeps answering from memory,
// starts etcd again, and runs `up -d` a second time to show restarts are
// safe.
func TestCompose(t *testing.T) {
	s := newStack(t, "docker-compose.yml", "kubesky-test",
		"KUBESKY_DNS_PORT", "KUBESKY_SKYDNS_HTTP_PORT", "KUBESKY_KUBE2SKY_HTTP_PORT",
		"KUBESKY_ETCD_PORT", "KUBESKY_APISERVER_PORT")
	s.up()
	dnsAddr := s.addr("KUBESKY_DNS_PORT")
	readyz := "http://" + s.addr("KUBESKY_SKYDNS_HTTP_PORT") + "/readyz"

	t.Run("the stack comes up and the loader applies the examples", func(t *testing.T) {
		s.waitExited("loader", startTimeout)
		waitHTTP(t, readyz, http.StatusOK, "ok", startTimeout)
		waitHTTP(t, "http://"+s.addr("KUBESKY_KUBE2SKY_HTTP_PORT")+"/readyz", http.StatusOK, "leader", startTimeout)
	})
	t.Run("A, SRV and PTR answers reach the host", func(t *testing.T) {
		waitAnswers(t, dnsAddr, exampleAnswers, time.Minute)
	})
	t.Run("with etcd stopped skydns stays ready, says etcd is unreachable and keeps answering", func(t *testing.T) {
		s.stop("etcd")
		waitHTTP(t, readyz+"?verbose", http.StatusOK, "etcd unreachable since", time.Minute)
		for range 3 {
			if err := checkAll(dnsAddr, exampleAnswers); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("etcd started again makes skydns ready again", func(t *testing.T) {
		s.run("start", "etcd")
		waitHTTP(t, readyz, http.StatusOK, "ok", startTimeout)
		waitAnswers(t, dnsAddr, exampleAnswers, time.Minute)
	})
	t.Run("up again keeps the certificates and data and still answers", func(t *testing.T) {
		s.run("up", "-d")
		s.waitExited("pki", startTimeout)
		s.waitExited("loader", startTimeout)
		waitHTTP(t, "http://"+s.addr("KUBESKY_KUBE2SKY_HTTP_PORT")+"/readyz", http.StatusOK, "leader", startTimeout)
		waitAnswers(t, dnsAddr, exampleAnswers, time.Minute)
	})
}
