package skydns

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// TestServeStaleThroughTheDaemon stops the only upstream of a running
// daemon: the expired answer keeps coming back stale, with TTL 30, and the
// dead upstream is health-checked.
func TestServeStaleThroughTheDaemon(t *testing.T) {
	answer := func(_ context.Context, q dnsserver.Query) *dns.Msg {
		resp := new(dns.Msg).SetReply(q.Msg)
		rr, err := dns.NewRR(q.Msg.Question[0].Name + " 1 IN A 192.0.2.7")
		if err != nil {
			panic(err)
		}
		resp.Answer = []dns.RR{rr}
		return resp
	}
	upstream, err := dnsserver.Start(dnsserver.Config{Addr: "127.0.0.1:0", Answerer: dnsserver.AnswerFunc(answer)})
	if err != nil {
		t.Fatal(err)
	}
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{upstream.Addr()}
	cfg.Forward.ServeStale = time.Hour
	cfg.Forward.ForwardTimeout, cfg.Forward.ForwardDeadline = 200*time.Millisecond, 400*time.Millisecond
	cfg.Forward.HealthCheck = 50 * time.Millisecond
	d := startDaemon(t, cfg)

	if msg := answerIs(ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA), dns.RcodeSuccess, "192.0.2.7"); msg != "" {
		t.Fatal(msg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := upstream.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	polltest.NoComplaint(t, "a stale answer", func() string {
		m := ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA)
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
		if metric(t, d, `skydns_forward_health_probes_total{result="error",upstream="`+upstream.Addr()+`"}`) < 1 {
			return "no failed probe yet"
		}
		return ""
	})
}
