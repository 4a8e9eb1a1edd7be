package skydns

import (
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestServeStaleThroughTheDaemon stops the only upstream of a running
// daemon: the expired answer keeps coming back stale, with TTL 30, and the
// dead upstream is health-checked.
func TestServeStaleThroughTheDaemon(t *testing.T) {
	answer := func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		rr, err := dns.NewRR(q.Question[0].Name + " 1 IN A 192.0.2.7")
		if err != nil {
			panic(err)
		}
		resp.Answer = []dns.RR{rr}
		return resp
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	upstream := pc.LocalAddr().String()
	stopUpstream := dnstest.Serve(t, &dns.Server{PacketConn: pc, Handler: dnstest.Reply(answer)})
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{upstream}
	cfg.Forward.ServeStale = time.Hour
	cfg.Forward.ForwardTimeout, cfg.Forward.ForwardDeadline = 200*time.Millisecond, 400*time.Millisecond
	cfg.Forward.HealthCheck = 50 * time.Millisecond
	d := startDaemon(t, cfg)

	if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA), dns.RcodeSuccess, "192.0.2.7"); msg != "" {
		t.Fatal(msg)
	}
	stopUpstream()
	polltest.NoComplaint(t, "a stale answer", func() string {
		m := dnstest.Ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA)
		if msg := answerIs(m, dns.RcodeSuccess, "192.0.2.7"); msg != "" {
			return msg
		}
		if m.Answer[0].Header().Ttl != 30 {
			return "not yet stale: " + m.Answer[0].String()
		}
		return ""
	})
	if got := metric(t, d, "skydns_forward_stale_answers_total"); got < 1 {
		t.Errorf("stale answers counted %v, want at least 1", got)
	}
	polltest.NoComplaint(t, "a failed health check of the stopped upstream", func() string {
		if metric(t, d, `skydns_forward_health_probes_total{result="error",upstream="`+upstream+`"}`) < 1 {
			return "no failed probe yet"
		}
		return ""
	})
}
