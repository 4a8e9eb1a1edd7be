package skydns

import (
	"log/slog"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/forward"
)

// TestForwardingSettingsFollowEtcd changes the upstreams and the
// recursion ACL through their dns/config records while skydns runs.
func TestForwardingSettingsFollowEtcd(t *testing.T) {
	first, second := fakeUpstream(t, "192.0.2.1"), fakeUpstream(t, "192.0.2.2")
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{first}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	d, err := Start(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDaemon(t, d) })
	key := func(flag string) string { return forward.ConfigKey(contract.DefaultPrefix, flag, "cluster.local.") }
	setting := func(flag, value string) {
		etcd.Put(t, key(flag), string(contract.Record{Text: value}.Encode()))
	}
	answers := func(rcode int, want ...string) func() string {
		return func() string {
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA), rcode, want...)
		}
	}

	polltest.NoComplaint(t, "the flag's upstream answers", answers(dns.RcodeSuccess, "192.0.2.1"))
	t.Run("a new upstream in etcd gets the queries", func(t *testing.T) {
		setting(forward.FlagUpstream, second)
		polltest.NoComplaint(t, "the second upstream answers", answers(dns.RcodeSuccess, "192.0.2.2"))
	})
	t.Run("a bad value is logged and every setting stays", func(t *testing.T) {
		setting(forward.FlagUpstream, "not-an-address")
		polltest.NoComplaint(t, "the warning", func() string {
			if logs.count("ignoring the live forwarding settings") == 0 || logs.count(key(forward.FlagUpstream)) == 0 {
				return "no warning naming " + key(forward.FlagUpstream)
			}
			return ""
		})
		setting(forward.FlagAllowRecursion, "192.0.2.0/24")
		settled(t, etcd, d)
		if msg := answers(dns.RcodeSuccess, "192.0.2.2")(); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("fixing the value applies the ACL and the upstream together", func(t *testing.T) {
		setting(forward.FlagUpstream, first)
		polltest.NoComplaint(t, "127.0.0.1 refused", answers(dns.RcodeRefused))
	})
	t.Run("deleting the records brings the flags' settings back", func(t *testing.T) {
		for _, flag := range []string{forward.FlagUpstream, forward.FlagAllowRecursion} {
			if _, err := etcd.Client.Delete(t.Context(), key(flag)); err != nil {
				t.Fatal(err)
			}
		}
		polltest.NoComplaint(t, "the flag's upstream answers", answers(dns.RcodeSuccess, "192.0.2.1"))
	})
	if n := logs.count("forwarding settings changed"); n < 3 {
		t.Errorf("%d 'forwarding settings changed' lines, want one per change", n)
	}
}

// settled returns once d has handled every revision of etcd so far: it
// writes one more record and waits until d's snapshot has its revision
// (snapshots are handled one after another).
func settled(t *testing.T, etcd *etcdtest.Server, d *Daemon) {
	t.Helper()
	rev := put(t, etcd, "settled.test.", "x", `{"host":"192.0.2.0"}`)
	polltest.NoComplaint(t, "the last revision served", func() string {
		if got := metric(t, d, "skydns_snapshot_revision"); got < float64(rev) {
			return "at an older revision"
		}
		return ""
	})
}
