package skydns

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/poll"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(removeBuilt)) }

const web = "web.default.svc.cluster.local."

func TestAnswersFollowEtcd(t *testing.T) {
	etcd, d := startWithEtcd(t)
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("a put is answered over "+proto, func(t *testing.T) {
			put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
			polltest.NoComplaint(t, "answer after put", func() string {
				return answerIs(dnstest.Ask(t, proto, d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
			})
		})
		t.Run("a changed value is answered over "+proto, func(t *testing.T) {
			put(t, etcd, web, "a1", `{"host":"10.96.0.11"}`)
			polltest.NoComplaint(t, "answer after change", func() string {
				return answerIs(dnstest.Ask(t, proto, d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.11")
			})
		})
		t.Run("a delete is answered over "+proto, func(t *testing.T) {
			etcd.Delete(t, contract.Key(contract.DefaultPrefix, web)+"/a1")
			polltest.NoComplaint(t, "answer after delete", func() string {
				return answerIs(dnstest.Ask(t, proto, d.DNSAddr(), web, dns.TypeA), dns.RcodeNameError)
			})
		})
	}
	t.Run("a name outside the zones is refused", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA), dns.RcodeRefused); msg != "" {
			t.Fatal(msg)
		}
	})
}

// TestTxnIsNeverSeenHalfApplied swaps 50 records of one name in one etcd
// transaction while a reader queries the name: every answer must hold the
// 50 old addresses or the 50 new ones, never a mix or a part.
func TestTxnIsNeverSeenHalfApplied(t *testing.T) {
	const n = 50
	etcd, d := startWithEtcd(t)
	const batch = "batch.default.svc.cluster.local."
	key := contract.Key(contract.DefaultPrefix, batch)
	var old []clientv3.Op
	for i := range n {
		old = append(old, clientv3.OpPut(fmt.Sprintf("%s/old%d", key, i), fmt.Sprintf(`{"host":"10.1.0.%d"}`, i)))
	}
	commit(t, etcd, old)
	polltest.NoComplaint(t, "old set served", func() string {
		if got := len(dnstest.Ask(t, "tcp", d.DNSAddr(), batch, dns.TypeA).Answer); got != n {
			return fmt.Sprintf("%d answers", got)
		}
		return ""
	})

	results := make(chan string, 1)
	go func() { results <- readUntilNewSet(d.DNSAddr(), batch, n) }()
	var swap []clientv3.Op
	for i := range n {
		swap = append(swap, clientv3.OpDelete(fmt.Sprintf("%s/old%d", key, i)),
			clientv3.OpPut(fmt.Sprintf("%s/new%d", key, i), fmt.Sprintf(`{"host":"10.2.0.%d"}`, i)))
	}
	commit(t, etcd, swap)
	if msg := <-results; msg != "" {
		t.Fatal(msg)
	}
}

func commit(t *testing.T, etcd *etcdtest.Server, ops []clientv3.Op) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := etcd.Client.Txn(ctx).Then(ops...).Commit(); err != nil {
		t.Fatalf("txn of %d ops: %v", len(ops), err)
	}
}

// readUntilNewSet queries name over TCP, one query right after the other,
// until it has seen the new set 20 times; it returns "" or a description
// of the first mixed answer.
func readUntilNewSet(addr, name string, n int) string {
	newSeen, queries := 0, 0
	err := poll.Every(context.Background(), 15*time.Second, 0, func(context.Context) error {
		resp, err := dnstest.Send("tcp", addr, new(dns.Msg).SetQuestion(name, dns.TypeA))
		if err != nil {
			return poll.Permanent(err)
		}
		if set, ok := oneSet(resp, n); !ok {
			return poll.Permanent(fmt.Errorf("query %d saw a half-applied transaction: %s", queries, strings.Join(answerData(resp), " ")))
		} else if set == "10.2.0." {
			newSeen++
		}
		queries++
		if newSeen < 20 {
			return fmt.Errorf("the new set served %d times in %d queries", newSeen, queries)
		}
		return nil
	})
	if err != nil {
		return err.Error()
	}
	return ""
}

// oneSet reports the common /24 prefix of resp's n A records, and whether
// there are n of them all sharing it.
func oneSet(resp *dns.Msg, n int) (string, bool) {
	if len(resp.Answer) != n {
		return "", false
	}
	var set string
	for _, rr := range resp.Answer {
		a, ok := rr.(*dns.A)
		if !ok {
			return "", false
		}
		p := a.A.String()[:len("10.1.0.")]
		if set != "" && p != set {
			return "", false
		}
		set = p
	}
	return set, true
}

// TestEtcdOutage stops etcd: the daemon stays ready and answers from its
// snapshot, the staleness metric rises, and both recover once etcd is back.
func TestEtcdOutage(t *testing.T) {
	etcd, d := startWithEtcd(t)
	url := etcd.ClientURL()
	put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
	polltest.NoComplaint(t, "answer before the outage", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
	})

	etcd.Stop()
	t.Run("readyz stays ok and verbose readyz says etcd is unreachable", func(t *testing.T) {
		polltest.NoComplaint(t, "verbose readyz", func() string {
			code, body := httpGet(t, d, "/readyz?verbose")
			if code != 200 || !strings.Contains(body, "; etcd unreachable since 20") || !strings.HasSuffix(body, "readyz check passed\n") {
				return fmt.Sprintf("%d %q", code, body)
			}
			return ""
		})
		if code, body := httpGet(t, d, "/readyz"); code != 200 || body != "ok\n" {
			t.Errorf("readyz %d %q, want 200 ok", code, body)
		}
		if v := metric(t, d, "skydns_etcd_connected"); v != 0 {
			t.Errorf("skydns_etcd_connected = %v, want 0", v)
		}
	})
	t.Run("the staleness metric rises while etcd is away", func(t *testing.T) {
		polltest.NoComplaint(t, "skydns_snapshot_stale_seconds above 1", func() string {
			if v := metric(t, d, "skydns_snapshot_stale_seconds"); v <= 1 {
				return fmt.Sprintf("at %v", v)
			}
			return ""
		})
	})
	t.Run("known names are still answered while etcd is away", func(t *testing.T) {
		for _, proto := range []string{"udp", "tcp"} {
			if msg := answerIs(dnstest.Ask(t, proto, d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
				t.Fatalf("%s: %s", proto, msg)
			}
		}
	})
	t.Run("healthz stays ok while etcd is away", func(t *testing.T) {
		if code, _ := httpGet(t, d, "/healthz"); code != 200 {
			t.Fatalf("healthz %d, want 200", code)
		}
	})

	etcd.Restart(t, url)
	t.Run("changes made after etcd is back are served", func(t *testing.T) {
		put(t, etcd, web, "a2", `{"host":"10.96.0.12"}`)
		polltest.NoComplaint(t, "answer after the outage", func() string {
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10", "10.96.0.12")
		})
	})
	t.Run("the staleness metric falls back once etcd is back", func(t *testing.T) {
		// Confirmed at every probe: within the 100ms probe interval, plus
		// a probe's own time.
		polltest.NoComplaint(t, "skydns_snapshot_stale_seconds below 1", func() string {
			if v := metric(t, d, "skydns_snapshot_stale_seconds"); v < 0 || v >= 1 {
				return fmt.Sprintf("at %v", v)
			}
			return ""
		})
	})
}

func TestMalformedValuesAreSkipped(t *testing.T) {
	etcd, d := startWithEtcd(t)
	put(t, etcd, "bad.default.svc.cluster.local.", "x", `{"host":`)
	put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
	polltest.NoComplaint(t, "good name served next to a bad one", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
	})
	t.Run("the bad value is counted once", func(t *testing.T) {
		if v := metric(t, d, "skydns_malformed_values_total"); v != 1 {
			t.Fatalf("skydns_malformed_values_total = %v, want 1", v)
		}
		if v := metric(t, d, "skydns_malformed_values"); v != 1 {
			t.Fatalf("skydns_malformed_values = %v, want 1", v)
		}
	})
	t.Run("the bad name has no answer", func(t *testing.T) {
		resp := dnstest.Ask(t, "udp", d.DNSAddr(), "bad.default.svc.cluster.local.", dns.TypeA)
		if len(resp.Answer) != 0 {
			t.Fatalf("got %v for a malformed record, want no answer", resp.Answer)
		}
	})
	t.Run("fixing the value clears the gauge but not the total", func(t *testing.T) {
		put(t, etcd, "bad.default.svc.cluster.local.", "x", `{"host":"10.96.0.99"}`)
		polltest.NoComplaint(t, "fixed name served", func() string {
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "bad.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.0.99")
		})
		if now, total := metric(t, d, "skydns_malformed_values"), metric(t, d, "skydns_malformed_values_total"); now != 0 || total != 1 {
			t.Fatalf("malformed gauge %v total %v, want 0 and 1", now, total)
		}
	})
}
