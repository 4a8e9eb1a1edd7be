package integration

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// kube-dns's ConfigMap (kube-system/kube-dns, --kube-dns-configmap) through
// the real kube-apiserver: kube2sky writes its stubDomains and
// upstreamNameservers into etcd, skydns forwards by them at once.

func TestTheKubeDNSConfigMapSteersForwarding(t *testing.T) {
	flagUpstream := dnstest.StartServer(t, addressUpstream("192.0.2.100"))
	cmUpstream := dnstest.StartServer(t, addressUpstream("192.0.2.200"))
	stubA, stubB := dnstest.StartServer(t, addressUpstream("192.0.2.1")), dnstest.StartServer(t, addressUpstream("192.0.2.2"))
	s := startStack(t, stackOptions{
		kube2skyArgs: []string{"--kube-dns-configmap=kube-system/kube-dns"},
		skydnsArgs:   []string{"--upstream=" + flagUpstream},
	})
	dnsAddr := s.skydns.DNSAddr
	waitAnswer(t, dnsAddr, "example.com.", dns.TypeA, "192.0.2.100")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns"}}
	setKubeDNSData(cm, map[string][]string{"acme.local": {stubA}}, []string{cmUpstream})

	t.Run("a new ConfigMap's stub domain and upstream are followed", func(t *testing.T) {
		start := time.Now()
		createConfigMap(t, s.kube, cm)
		waitAnswer(t, dnsAddr, "www.acme.local.", dns.TypeA, "192.0.2.1")
		t.Logf("kube-dns ConfigMap: a new stub domain answered after %v", time.Since(start))
		waitAnswer(t, dnsAddr, "example.com.", dns.TypeA, "192.0.2.200")
	})
	t.Run("an edit moves the stub domain", func(t *testing.T) {
		setKubeDNSData(cm, map[string][]string{"acme.local": {stubB}}, []string{cmUpstream})
		updateConfigMap(t, s.kube, cm)
		waitAnswer(t, dnsAddr, "www.acme.local.", dns.TypeA, "192.0.2.2")
	})
	t.Run("a broken ConfigMap gets an Event and a log line, and the last good settings stay", func(t *testing.T) {
		const syncs = `kube2sky_reconcile_duration_seconds_count{scope="service"}`
		before := s.kube2sky.Metric(syncs)
		cm.Data["stubDomains"] = `{"acme.local": ["ns1.acme.local"]}`
		updateConfigMap(t, s.kube, cm)
		ev := waitConfigMapEvent(t, s.kube, "kube-dns", "InvalidKubeDNSConfig")
		harness.Eventually(t, hostsTimeout, func() error { // the reconcile that saw the broken ConfigMap is over
			if s.kube2sky.Metric(syncs) <= before {
				return errors.New("kube2sky has not finished a reconcile since the edit")
			}
			return nil
		})
		if !strings.Contains(ev.Message, `stubDomains: "acme.local": server "ns1.acme.local"`) || ev.Type != corev1.EventTypeWarning {
			t.Errorf("event %s: %q; want a warning naming the bad server", ev.Type, ev.Message)
		}
		s.kube2sky.Process.WaitForLog("kube-dns ConfigMap not applied", hostsTimeout)
		resp, err := s.dnsEtcd.Client().Get(t.Context(), "/skydns/local/cluster/dns/stub/local/acme/ns1")
		_, portB, _ := net.SplitHostPort(stubB)
		if err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"port":`+portB+",") {
			t.Errorf("the stub record in etcd after the broken edit: %v %v; want the last good one", resp, err)
		}
		if err := answersNow(dnsAddr, "www.acme.local.", dns.TypeA, []string{"192.0.2.2"}); err != nil {
			t.Errorf("www.acme.local.: %v", err)
		}
		if err := answersNow(dnsAddr, "example.com.", dns.TypeA, []string{"192.0.2.200"}); err != nil {
			t.Errorf("example.com.: %v", err)
		}
	})
	t.Run("deleting the ConfigMap brings skydns's flags back", func(t *testing.T) {
		if err := s.kube.CoreV1().ConfigMaps("kube-system").Delete(t.Context(), "kube-dns", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAnswer(t, dnsAddr, "example.com.", dns.TypeA, "192.0.2.100")
		waitAnswer(t, dnsAddr, "www.acme.local.", dns.TypeA, "192.0.2.100")
	})
}

// setKubeDNSData writes stub domains and upstreams into cm as kube-dns
// read them: two JSON documents.
func setKubeDNSData(cm *corev1.ConfigMap, stubs map[string][]string, upstreams []string) {
	s, _ := json.Marshal(stubs)
	u, _ := json.Marshal(upstreams)
	cm.Data = map[string]string{"stubDomains": string(s), "upstreamNameservers": string(u)}
}

// addressUpstream answers every A question with ip.
func addressUpstream(ip string) dns.HandlerFunc {
	return func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg).SetReply(req)
		if len(req.Question) == 1 && req.Question[0].Qtype == dns.TypeA {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30},
				A: net.ParseIP(ip)}}
		}
		w.WriteMsg(m)
	}
}

// waitConfigMapEvent waits for kube2sky's event with reason on the
// ConfigMap kube-system/name and returns the newest.
func waitConfigMapEvent(t *testing.T, kube kubernetes.Interface, name, reason string) corev1.Event {
	t.Helper()
	var found corev1.Event
	harness.Eventually(t, hostsTimeout, func() error {
		evs, err := kube.CoreV1().Events("kube-system").List(t.Context(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=ConfigMap,involvedObject.name=" + name + ",reason=" + reason,
		})
		if err != nil {
			return err
		}
		if len(evs.Items) == 0 {
			return errors.New("no " + reason + " event on kube-system/" + name)
		}
		found = evs.Items[len(evs.Items)-1]
		return nil
	})
	return found
}
