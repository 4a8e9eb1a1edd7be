package skydns

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/freeport"
	"github.com/kubesky/kubesky/internal/polltest"
)

// unboundLoopConf, after unboundServer, makes Unbound forward every name
// to skydns at 127.0.0.1@%[1]d, which forwards names of a stub domain to
// it: a forwarding loop, like a node's resolv.conf pointing back at
// cluster DNS.
const unboundLoopConf = `	do-not-query-localhost: no
	module-config: "iterator"
forward-zone:
	name: "."
	forward-addr: 127.0.0.1@%[1]d
remote-control:
	control-enable: no
`

// startUnboundForwardingTo runs Debian's unbound on a free 127.0.0.1 port,
// forwarding every name to 127.0.0.1:target, until the test ends.
func startUnboundForwardingTo(t *testing.T, target int) string {
	t.Helper()
	bin := need(t, "unbound", "unbound")
	dir := t.TempDir()
	port := freeport.Port(t)
	conf := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(conf, fmt.Appendf([]byte(unboundServer(port, dir)), unboundLoopConf, target), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", "-c", conf)
	cmd.Stderr = t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	polltest.Eventually(t, "unbound answering on "+addr, func() error {
		_, err := dnstest.Send("udp", addr, new(dns.Msg).SetQuestion("localhost.", dns.TypeA))
		return err
	})
	return addr
}

// TestAForwardingLoopThroughUnboundIsFoundAndCut: skydns forwards the stub
// domain loop.example to a real Unbound that forwards everything back to
// skydns. skydns's loop probe comes back; it stops forwarding to Unbound,
// answers loop.example names SERVFAIL without asking it, still answers its
// zone and the names its other upstream serves, and reports the loop in
// its log, a metric and /readyz/forward, but stays ready.
func TestAForwardingLoopThroughUnboundIsFoundAndCut(t *testing.T) {
	skydnsPort := freeport.Port(t)
	unbound := startUnboundForwardingTo(t, skydnsPort)
	clean := fakeUpstream(t, "192.0.2.1")

	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.DNSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(skydnsPort))
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{clean}
	cfg.Forward.StubDomains = []string{"loop.example=" + unbound}
	logs := &logBuffer{}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := Start(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop(t.Context()) })
	put(t, etcd, "web.default.svc.cluster.local.", "a1", `{"host":"10.96.0.10"}`)

	loopSeries := `skydns_forward_loop{upstream="` + unbound + `"}`
	polltest.Eventually(t, "the loop through unbound found", func() error {
		if v := metric(t, d, loopSeries); v != 1 {
			return fmt.Errorf("%s is %v", loopSeries, v)
		}
		return nil
	})

	t.Run("the loop is in the log, /readyz/forward and /readyz?verbose, and the replica stays ready", func(t *testing.T) {
		if !strings.Contains(logs.String(), "forwarding loop") || !strings.Contains(logs.String(), unbound) {
			t.Errorf("no log line names the loop through %s:\n%s", unbound, logs)
		}
		if code, body := httpGet(t, d, "/readyz/forward"); code != 503 || !strings.Contains(body, unbound) {
			t.Errorf("/readyz/forward: %d %q, want 503 naming %s", code, body, unbound)
		}
		polltest.Eventually(t, "ready once synced, naming the loop", func() error { // the first list may still be on its way
			if code, body := httpGet(t, d, "/readyz?verbose"); code != 200 || !strings.Contains(body, "[!]forward: forwarding loop through "+unbound) {
				return fmt.Errorf("/readyz?verbose: %d\n%s", code, body)
			}
			return nil
		})
	})
	t.Run("the zone is answered", func(t *testing.T) {
		polltest.Eventually(t, "the service answered", func() error {
			if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
				return fmt.Errorf("%s", msg)
			}
			return nil
		})
	})
	t.Run("names of the clean upstream are answered", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "www.example.org.", dns.TypeA), dns.RcodeSuccess, "192.0.2.1"); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("names only the looping upstream serves get SERVFAIL without it being asked", func(t *testing.T) {
		asked := func() float64 {
			return metricSum(t, d, "skydns_forward_upstream_requests_total", `upstream="`+unbound+`"`)
		}
		before := asked()
		for i := range 5 {
			resp := dnstest.Ask(t, "udp", d.DNSAddr(), fmt.Sprintf("host%d.loop.example.", i), dns.TypeA)
			if resp.Rcode != dns.RcodeServerFailure {
				t.Fatalf("rcode %s, want SERVFAIL", dns.RcodeToString[resp.Rcode])
			}
		}
		if after := asked(); after != before {
			t.Fatalf("the looping upstream was asked %v times", after-before)
		}
	})
}
