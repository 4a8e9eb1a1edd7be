package skydns

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// TestMaxStaleTurnsAStaleReplicaUnready sets --max-stale: with etcd away
// for longer, /readyz turns 503 (DNS still answers), and ready again once
// etcd confirms the snapshot.
func TestMaxStaleTurnsAStaleReplicaUnready(t *testing.T) {
	etcd := etcdtest.Start(t)
	url := etcd.ClientURL()
	cfg := testConfig(url)
	cfg.MaxStale = time.Second
	d := startDaemon(t, cfg)
	put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
	waitReadyz(t, d, 200, "ok\n")
	polltest.NoComplaint(t, "answer", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
	})

	stopped := time.Now() // etcd.Stop takes a while, and answers no more from its start
	etcd.Stop()
	t.Run("readyz turns 503 once the snapshot is older than --max-stale", func(t *testing.T) {
		waitReadyz(t, d, 503, "stale: snapshot last confirmed current by etcd ")
		// The last confirmation came at most a probe interval before
		// the stop.
		if took := time.Since(stopped); took < cfg.MaxStale-cfg.EtcdProbeInterval {
			t.Errorf("unready %v after etcd stopped, before --max-stale %v (less a probe interval)", took, cfg.MaxStale)
		}
		_, verbose := httpGet(t, d, "/readyz?verbose")
		if !strings.Contains(verbose, "[-]max-stale failed: stale:") || !strings.Contains(verbose, "[+]synced ok") {
			t.Errorf("verbose readyz %q, want max-stale failed and synced ok", verbose)
		}
	})
	t.Run("a stale replica still answers", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
	})
	etcd.Restart(t, url)
	t.Run("readyz is ok again once etcd confirms the snapshot", func(t *testing.T) {
		waitReadyz(t, d, 200, "ok\n")
	})
}

// TestLameduckKeepsAnsweringWhileUnready runs the shutdown Run does on
// SIGTERM: during the lameduck /readyz is 503 and DNS answers over UDP
// and TCP; after it both DNS ports are closed.
func TestLameduckKeepsAnsweringWhileUnready(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Lameduck = 2 * time.Second
	d := startDaemon(t, cfg)
	put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
	waitReadyz(t, d, 200, "ok\n")
	polltest.NoComplaint(t, "answer", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
	})
	addr := d.DNSAddr()

	began := time.Now()
	stopped := make(chan error, 1)
	go func() {
		d.Lameduck(context.Background())
		stopped <- d.Stop(context.Background())
	}()
	t.Run("readyz is 503 and says why during the lameduck", func(t *testing.T) {
		waitReadyz(t, d, 503, "shutting down: lameduck")
	})
	t.Run("DNS answers during the lameduck", func(t *testing.T) {
		for _, proto := range []string{"udp", "tcp"} {
			if msg := answerIs(dnstest.Ask(t, proto, addr, web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
				t.Fatalf("%s: %s", proto, msg)
			}
		}
		if took := time.Since(began); took >= cfg.Lameduck {
			t.Fatalf("the checks took %v, longer than the lameduck: they proved nothing", took)
		}
	})
	t.Run("after the lameduck the DNS ports are closed", func(t *testing.T) {
		if err := <-stopped; err != nil {
			t.Fatalf("Stop: %v", err)
		}
		if took := time.Since(began); took < cfg.Lameduck {
			t.Errorf("stopped %v after the lameduck began, want at least %v", took, cfg.Lameduck)
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("TCP %s still accepts connections", addr)
		}
		if _, err := dnstest.Send("udp", addr, new(dns.Msg).SetQuestion(web, dns.TypeA)); err == nil {
			t.Errorf("UDP %s still answers", addr)
		}
	})
}

// heldForwarder answers REFUSED, but only once released: a query that is
// in flight for as long as the test wants.
type heldForwarder struct {
	arrived chan struct{}
	release chan struct{}
}

func (f *heldForwarder) Forward(_ context.Context, q dnsserver.Query) *dns.Msg {
	f.arrived <- struct{}{}
	<-f.release
	return new(dns.Msg).SetRcode(q.Msg, dns.RcodeRefused)
}

// TestStopFinishesTCPQueriesInFlight closes the listeners while a TCP
// query is being answered: the query gets its answer, then Stop returns.
func TestStopFinishesTCPQueriesInFlight(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	held := &heldForwarder{arrived: make(chan struct{}, 1), release: make(chan struct{})}
	cfg.Forwarder = held
	d := startDaemon(t, cfg)
	waitReadyz(t, d, 200, "ok\n")

	answered := make(chan error, 1)
	go func() {
		resp, err := dnstest.Send("tcp", d.DNSAddr(), new(dns.Msg).SetQuestion("example.com.", dns.TypeA))
		if err == nil && resp.Rcode != dns.RcodeRefused {
			err = fmt.Errorf("answered %s, want REFUSED", dns.RcodeToString[resp.Rcode])
		}
		answered <- err
	}()
	<-held.arrived
	stopped := make(chan error, 1)
	go func() { stopped <- d.Stop(context.Background()) }()
	waitReadyz(t, d, 503, "shutting down: DNS listeners closing")
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with a query in flight", err)
	default:
	}
	close(held.release)
	if err := <-answered; err != nil {
		t.Fatalf("the query in flight: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// waitReadyz polls /readyz until it answers code with a body starting
// with prefix.
func waitReadyz(t *testing.T, d *Daemon, code int, prefix string) {
	t.Helper()
	polltest.NoComplaint(t, "readyz", func() string {
		got, body := httpGet(t, d, "/readyz")
		if got != code || !strings.HasPrefix(body, prefix) {
			return fmt.Sprintf("%d %q, want %d %q", got, body, code, prefix)
		}
		return ""
	})
}
