package skydns

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestClustersetLocalIsAnsweredFromTheExportsAndSkipsAMalformedOne(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.ClustersetPrefix, cfg.ClusterID = cs.DefaultPrefix, "east"
	d := startDaemon(t, cfg)
	export := cs.Export{Created: time.Now().UTC(), Type: cs.Headless,
		Endpoints: []cs.Endpoint{{Hostname: "db-0", Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.5")}}}}
	etcd.Put(t, "/clusterset/exports/east/shop/db", string(export.Encode()))
	etcd.Put(t, "/clusterset/exports/west/shop/db", `{"type":"Headless"}`) // no created time
	polltest.Within(t, 5*time.Second, "db.shop.svc.clusterset.local answered", func() error {
		return answerErr(d, "db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, "10.1.0.5")
	})
	if err := answerErr(d, "db-0.east.db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, "10.1.0.5"); err != nil {
		t.Error(err)
	}
	if err := answerErr(d, "dns-version.clusterset.local.", dns.TypeTXT, dns.RcodeSuccess, `"1.0.0"`); err != nil {
		t.Error(err)
	}
	etcd.Delete(t, "/clusterset/exports/east/shop/db")
	polltest.Within(t, 5*time.Second, "db.shop.svc.clusterset.local gone", func() error {
		return answerErr(d, "db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError)
	})
}

func TestWithoutAClustersetPrefixClustersetLocalIsNotAnswered(t *testing.T) {
	_, d := startWithEtcd(t)
	if err := answerErr(d, "dns-version.clusterset.local.", dns.TypeTXT, dns.RcodeRefused); err != nil {
		t.Error(err) // testConfig's forwarder refuses
	}
}

func TestAClustersetPrefixOverlappingTheRecordsIsRefused(t *testing.T) {
	for _, prefix := range []string{"/skydns", "/skydns/clusterset", "clusterset"} {
		cfg := testConfig("http://127.0.0.1:2379")
		cfg.ClustersetPrefix = prefix
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--clusterset-prefix") {
			t.Errorf("--clusterset-prefix=%s: %v, want an error naming the flag", prefix, err)
		}
	}
}

func TestAClustersetNeedsAValidClusterID(t *testing.T) {
	for _, c := range []struct{ prefix, id string }{{cs.DefaultPrefix, ""}, {cs.DefaultPrefix, "East.1"}, {"", "east"}} {
		cfg := testConfig("http://127.0.0.1:2379")
		cfg.ClustersetPrefix, cfg.ClusterID = c.prefix, c.id
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--cluster-id") {
			t.Errorf("--clusterset-prefix=%q --cluster-id=%q: %v, want an error naming --cluster-id", c.prefix, c.id, err)
		}
	}
}

func answerErr(d *Daemon, name string, qtype uint16, rcode int, want ...string) error {
	resp, err := dns.Exchange(new(dns.Msg).SetQuestion(name, qtype), d.DNSAddr())
	if err != nil {
		return err
	}
	if msg := answerIs(resp, rcode, want...); msg != "" {
		return errors.New(name + ": " + msg)
	}
	return nil
}

func TestClustersetLocalIsReadFromTheBrokerEtcdAndItsOutageIsReported(t *testing.T) {
	records, broker := etcdtest.Start(t), etcdtest.Start(t)
	cfg := testConfig(records.ClientURL())
	cfg.ClustersetPrefix, cfg.ClusterID = cs.DefaultPrefix, "east"
	cfg.ClustersetEtcd.Endpoints = []string{broker.ClientURL()}
	cfg.ClustersetEtcd.DialTimeout = time.Second
	d := startDaemon(t, cfg)
	headless := func(ip string) string {
		e := cs.Export{Created: time.Now().UTC(), Type: cs.Headless,
			Endpoints: []cs.Endpoint{{Hostname: "db-0", Addresses: []netip.Addr{netip.MustParseAddr(ip)}}}}
		return string(e.Encode())
	}
	broker.Put(t, "/clusterset/exports/east/shop/db", headless("10.1.0.5"))
	records.Put(t, "/clusterset/exports/east/shop/db", headless("10.9.9.9")) // not the broker's: never answered
	put(t, records, "web.default.svc.cluster.local.", "a", `{"host":"10.96.0.7"}`)
	polltest.Within(t, 5*time.Second, "the broker's export answered", func() error {
		return answerErr(d, "db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, "10.1.0.5")
	})
	if got := metric(t, d, "skydns_clusterset_etcd_connected"); got != 1 {
		t.Errorf("skydns_clusterset_etcd_connected = %v, want 1", got)
	}
	if _, body := httpGet(t, d, "/readyz?verbose"); !strings.Contains(body, "[+]clusterset ok") {
		t.Errorf("/readyz?verbose does not report the clusterset ok:\n%s", body)
	}

	broker.Stop()
	polltest.Within(t, 10*time.Second, "the broker's outage reported", func() error {
		if got := metric(t, d, "skydns_clusterset_etcd_connected"); got != 0 {
			return fmt.Errorf("skydns_clusterset_etcd_connected = %v", got)
		}
		if code, body := httpGet(t, d, "/readyz?verbose"); code != 200 || !strings.Contains(body, "[!]clusterset: etcd unreachable since") {
			return fmt.Errorf("/readyz?verbose: %d\n%s", code, body)
		}
		return nil
	})
	if got := metric(t, d, "skydns_etcd_connected"); got != 1 {
		t.Errorf("skydns_etcd_connected = %v with the records' etcd up, want 1", got)
	}
	for name, want := range map[string]string{"db.shop.svc.clusterset.local.": "10.1.0.5", "web.default.svc.cluster.local.": "10.96.0.7"} {
		if err := answerErr(d, name, dns.TypeA, dns.RcodeSuccess, want); err != nil {
			t.Errorf("with the broker away: %v", err)
		}
	}
}
