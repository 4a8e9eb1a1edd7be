package explain

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/internal/dnstest"
)

func TestParseReplica(t *testing.T) {
	cases := []struct {
		in      string
		want    Replica
		wantErr string
	}{
		{"127.0.0.1:1053", Replica{DNS: "127.0.0.1:1053"}, ""},
		{"10.96.0.10", Replica{DNS: "10.96.0.10:53"}, ""},
		{"fd00::a", Replica{DNS: "[fd00::a]:53"}, ""},
		{"10.244.1.5:53,http=10.244.1.5:8081", Replica{DNS: "10.244.1.5:53", HTTP: "10.244.1.5:8081"}, ""},
		{"10.244.1.5:99999", Replica{}, `port "99999" is not 1..65535`},
		{"10.244.1.5:53,metrics=x:1", Replica{}, "after the comma want http=HOST:PORT"},
		{":53", Replica{}, "no host"},
	}
	for _, c := range cases {
		got, err := ParseReplica(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseReplica(%q) error %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseReplica(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestReplicasFromSlices(t *testing.T) {
	port := func(name string, n int32) discoveryv1.EndpointPort {
		return discoveryv1.EndpointPort{Name: ptr.To(name), Port: ptr.To(n)}
	}
	list := []discoveryv1.EndpointSlice{{
		Ports: []discoveryv1.EndpointPort{port("dns", 53), port("dns-tcp", 53), port("metrics", 8081)},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.2.9"}},
			{Addresses: []string{"10.244.1.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.244.3.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
		},
	}, {
		Ports:     []discoveryv1.EndpointPort{port("metrics", 8081)},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.4.4"}}},
	}}
	got := fmt.Sprint(ReplicasFromSlices(list))
	want := "[{10.244.1.5:53 10.244.1.5:8081} {10.244.2.9:53 10.244.2.9:8081}]"
	if got != want {
		t.Fatalf("replicas %s, want %s: ready endpoints of slices with a dns port, sorted", got, want)
	}
}

func TestObserveAsksAndReadsTheAppliedRevision(t *testing.T) {
	dnsAddr := dnstest.StartServer(t, dnstest.Reply(func(req *dns.Msg) *dns.Msg {
		m := new(dns.Msg).SetReply(req)
		rr, _ := dns.NewRR(req.Question[0].Name + " 30 IN A 10.96.0.10")
		m.Answer = []dns.RR{rr}
		return m
	}))
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP skydns_snapshot_revision etcd revision of the snapshot being served.\n"+
			"# TYPE skydns_snapshot_revision gauge\nskydns_snapshot_revision 1234\n")
	}))
	t.Cleanup(metrics.Close)
	q, _ := ParseQuery("/skydns", []string{"web.default.svc.cluster.local"})
	for _, tcp := range []bool{false, true} {
		s := observe(t.Context(), Replica{DNS: dnsAddr, HTTP: strings.TrimPrefix(metrics.URL, "http://")}, q, asking{timeout: 5 * time.Second, tcp: tcp})
		if s.AskErr != nil || s.Rcode != "NOERROR" || fmt.Sprint(s.Answer) != "[web.default.svc.cluster.local. 30 IN A 10.96.0.10]" {
			t.Errorf("tcp only %v: answer %s %v %v", tcp, s.Rcode, s.Answer, s.AskErr)
		}
		if s.RevErr != nil || s.Applied != 1234 {
			t.Errorf("tcp only %v: applied revision %d %v, want 1234", tcp, s.Applied, s.RevErr)
		}
	}
	t.Run("--tcp asks over TCP only", func(t *testing.T) {
		udpOnly := udpServer(t)
		if s := observe(t.Context(), Replica{DNS: udpOnly}, q, asking{timeout: 300 * time.Millisecond, tcp: true}); s.AskErr == nil {
			t.Fatalf("a UDP-only server answered over TCP: %+v", s)
		}
		if s := observe(t.Context(), Replica{DNS: udpOnly}, q, asking{timeout: 5 * time.Second}); s.AskErr != nil {
			t.Fatalf("the UDP-only server did not answer over UDP: %v", s.AskErr)
		}
	})
	t.Run("a /metrics without the gauge is an error", func(t *testing.T) {
		empty := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(empty.Close)
		_, err := appliedRevision(t.Context(), strings.TrimPrefix(empty.URL, "http://"))
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("error %v, want the 404", err)
		}
	})
}

// udpServer serves NOERROR over UDP only on 127.0.0.1 until the test ends.
func udpServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dnstest.Serve(t, &dns.Server{PacketConn: pc, Handler: dnstest.Reply(func(req *dns.Msg) *dns.Msg {
		return new(dns.Msg).SetReply(req)
	})})
	return pc.LocalAddr().String()
}
