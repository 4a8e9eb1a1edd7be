package skydns

import (
	"errors"
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
