package skydns

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestHTTPEndpoints(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Pprof = true
	d := startDaemon(t, cfg)
	polltest.NoComplaint(t, "readyz", func() string {
		if code, body := httpGet(t, d, "/readyz"); code != 200 || body != "ok\n" {
			return fmt.Sprintf("%d %q", code, body)
		}
		return ""
	})
	t.Run("healthz is ok", func(t *testing.T) {
		if code, body := httpGet(t, d, "/healthz"); code != 200 || body != "ok\n" {
			t.Fatalf("got %d %q", code, body)
		}
	})
	t.Run("metrics count queries with CoreDNS's labels", func(t *testing.T) {
		dnstest.Ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeMX)
		server := `server="dns://` + d.DNSAddr() + `"`
		for _, c := range []struct {
			name   string
			labels []string
		}{
			{"skydns_dns_requests_total", []string{server, `zone="."`, `proto="udp"`, `family="1"`, `type="MX"`}},
			{"skydns_dns_responses_total", []string{server, `zone="."`, `rcode="REFUSED"`, `plugin="forward"`}},
			{"skydns_dns_request_duration_seconds_count", []string{server, `zone="."`, `type="MX"`}},
			{"skydns_dns_request_size_bytes_count", []string{server, `zone="."`, `proto="udp"`}},
			{"skydns_dns_response_size_bytes_bucket", []string{server, `zone="."`, `proto="udp"`, `le="+Inf"`}},
		} {
			if v := metricSum(t, d, c.name, c.labels...); v != 1 {
				t.Errorf("%s%v = %v, want 1", c.name, c.labels, v)
			}
		}
	})
	t.Run("metrics tell TCP queries from UDP ones", func(t *testing.T) {
		dnstest.Ask(t, "tcp", d.DNSAddr(), "example.com.", dns.TypeTXT)
		// The answer is written before it is counted: poll until it is.
		polltest.NoComplaint(t, "TCP metrics", func() string {
			for _, name := range []string{"skydns_dns_requests_total", "skydns_dns_request_size_bytes_count", "skydns_dns_response_size_bytes_count"} {
				if v := metricSum(t, d, name, `zone="."`, `proto="tcp"`); v != 1 {
					return fmt.Sprintf("%s{proto=\"tcp\"} = %v, want 1", name, v)
				}
			}
			return ""
		})
	})
	t.Run("metrics report the snapshot and the etcd state", func(t *testing.T) {
		rev := put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
		polltest.NoComplaint(t, "revision metric", func() string {
			if v := metric(t, d, "skydns_snapshot_revision"); v != float64(rev) {
				return fmt.Sprintf("at %v", v)
			}
			return ""
		})
		for series, want := range map[string]float64{"skydns_snapshot_records": 1, "skydns_etcd_connected": 1,
			"skydns_mirror_synced": 1, "skydns_etcd_lists_total": 1} {
			if v := metric(t, d, series); v != want {
				t.Errorf("%s = %v, want %v", series, v, want)
			}
		}
		// etcd confirms the snapshot at every 100ms probe.
		if v := metric(t, d, "skydns_snapshot_stale_seconds"); v < 0 || v >= 1 {
			t.Errorf("skydns_snapshot_stale_seconds = %v, want under a second while etcd answers", v)
		}
	})
	t.Run("malformed packets are counted", func(t *testing.T) {
		conn, err := net.Dial("udp", d.DNSAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.Write([]byte{0xde, 0xad})
		polltest.NoComplaint(t, "malformed packet metric", func() string {
			if v := metric(t, d, "skydns_dns_malformed_packets_total"); v != 1 {
				return fmt.Sprintf("at %v", v)
			}
			return ""
		})
	})
	t.Run("pprof is mounted with --pprof", func(t *testing.T) {
		if code, body := httpGet(t, d, "/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
			t.Fatalf("got %d", code)
		}
	})
}

func TestHTTPWithoutPprof(t *testing.T) {
	etcd := etcdtest.Start(t)
	d := startDaemon(t, testConfig(etcd.ClientURL()))
	if code, _ := httpGet(t, d, "/debug/pprof/"); code != 404 {
		t.Fatalf("pprof answered %d without --pprof, want 404", code)
	}
}

func TestStartWhileEtcdIsAway(t *testing.T) {
	etcd := etcdtest.Start(t)
	url := etcd.ClientURL()
	etcd.Stop()
	d := startDaemon(t, testConfig(url))
	t.Run("readyz says not synced and why", func(t *testing.T) {
		polltest.NoComplaint(t, "readyz", func() string {
			code, body := httpGet(t, d, "/readyz")
			if code != 503 || !strings.HasPrefix(body, "not synced: etcd unreachable since ") {
				return fmt.Sprintf("%d %q", code, body)
			}
			return ""
		})
	})
	t.Run("names in the zones get SERVFAIL, not a false NXDOMAIN", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeServerFailure); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("names outside the zones are still refused", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "tcp", d.DNSAddr(), "example.com.", dns.TypeA), dns.RcodeRefused); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("the daemon syncs once etcd comes up", func(t *testing.T) {
		etcd.Restart(t, url)
		polltest.NoComplaint(t, "readyz", func() string {
			if code, body := httpGet(t, d, "/readyz"); code != 200 {
				return fmt.Sprintf("%d %q", code, body)
			}
			return ""
		})
	})
}
