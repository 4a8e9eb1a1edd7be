package skydns

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// startForwardingOverTLS starts a daemon whose only upstream is
// tls://upstream#name, verified against ca, logging into logs.
func startForwardingOverTLS(t *testing.T, upstream, name, caFile string, logs *logBuffer) *Daemon {
	t.Helper()
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{"tls://" + upstream + "#" + name}
	cfg.Forward.UpstreamTLSCA = caFile
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := Start(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop(t.Context()) })
	return d
}

func TestNamesAreForwardedToUnboundOverTLS(t *testing.T) {
	ca := newTestCA(t)
	certFile, keyFile, _ := issueServing(t, ca, "unbound")
	unbound := startUnboundDoT(t, certFile, keyFile)

	t.Run("the forwarded name is answered", func(t *testing.T) {
		d := startForwardingOverTLS(t, unbound, dotName, ca.CertFile, &logBuffer{})
		for _, proto := range []string{"udp", "tcp", "udp"} { // the connection is reused
			if msg := answerIs(dnstest.Ask(t, proto, d.DNSAddr(), dotLocalName, dns.TypeA), dns.RcodeSuccess, "192.0.2.53"); msg != "" {
				t.Fatal(msg)
			}
		}
	})
	t.Run("a server name the certificate is not for fails verification", func(t *testing.T) {
		logs := &logBuffer{}
		d := startForwardingOverTLS(t, unbound, "wrong.kubesky.test", ca.CertFile, logs)
		if resp := dnstest.Ask(t, "udp", d.DNSAddr(), dotLocalName, dns.TypeA); resp.Rcode != dns.RcodeServerFailure {
			t.Fatalf("rcode %s, want SERVFAIL", dns.RcodeToString[resp.Rcode])
		}
		if !strings.Contains(logs.String(), "not wrong.kubesky.test") {
			t.Fatalf("no log line says the certificate is not for the name:\n%s", logs)
		}
	})
}
