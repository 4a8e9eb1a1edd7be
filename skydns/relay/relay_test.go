package relay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/relay"
)

// setup is an etcd with TLS, client certificates and auth on, holding a
// few records, with these users (each its certificate's common name):
// root; relay and reader, which may read /skydns/; writer, which may
// read and write it (each as far as a watch of it reaches, as
// kubesky-demo etcd-auth grants: etcdstore.PrefixPermissions).
type setup struct {
	pki  *etcdtest.PKI
	etcd *etcdtest.Server
	// watchBatch is the relay's --watch-batch (0: grpcproxy's Watch).
	watchBatch time.Duration
}

func newSetup(t testing.TB) setup {
	t.Helper()
	return newSetupWithProgressNotify(t, 0)
}

// newSetupWithProgressNotify is newSetup with etcd sending progress
// notifications to quiet watches every interval (0: etcd's default).
func newSetupWithProgressNotify(t testing.TB, interval time.Duration) setup {
	t.Helper()
	pki := etcdtest.NewPKI(t)
	s := setup{pki: pki, etcd: etcdtest.StartSecureWithProgressNotify(t, pki, "root", interval)}
	for i := range 5 {
		s.etcd.Put(t, fmt.Sprintf("/skydns/local/cluster/svc/default/s%d/x", i), fmt.Sprintf(`{"host":"10.0.0.%d"}`, i))
	}
	s.etcd.Put(t, "/other/key", "outside the prefix")
	c, ctx := s.etcd.Client, t.Context()
	must(t, func() error {
		_, err := c.UserAddWithOptions(ctx, "root", "", &clientv3.UserAddOptions{NoPassword: true})
		return err
	})
	must(t, func() error { _, err := c.UserGrantRole(ctx, "root", "root"); return err })
	for user, perm := range map[string]clientv3.PermissionType{"relay": clientv3.PermissionType(clientv3.PermRead), "reader": clientv3.PermissionType(clientv3.PermRead), "writer": clientv3.PermissionType(clientv3.PermReadWrite)} {
		must(t, func() error { _, err := c.RoleAdd(ctx, user); return err })
		for _, p := range etcdstore.PrefixPermissions("/skydns/", perm) {
			must(t, func() error { _, err := c.RoleGrantPermission(ctx, user, p.Key, p.End, p.Type); return err })
		}
		must(t, func() error {
			_, err := c.UserAddWithOptions(ctx, user, "", &clientv3.UserAddOptions{NoPassword: true})
			return err
		})
		must(t, func() error { _, err := c.UserGrantRole(ctx, user, user); return err })
	}
	must(t, func() error { _, err := c.AuthEnable(ctx); return err })
	return s
}

func must(t testing.TB, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

// startRelay serves the relay on 127.0.0.1 until the test ends, reaching
// etcd as upstreamUser and letting in the readers allowed; it returns its
// URL.
func (s setup) startRelay(t testing.TB, upstreamUser string, allowed ...string) string {
	t.Helper()
	upstream := etcdtest.NewClientWith(t, s.pki.Options(s.etcd.ClientURL(), s.pki.Client(t, upstreamUser)))
	server := s.pki.Server()
	cfg := relay.Config{CertFile: server.CertFile, KeyFile: server.KeyFile, TrustedCAFile: s.pki.CAFile}
	tlsConfig, err := relay.ServerTLS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := relay.NewServer(t.Context(), upstream, tlsConfig, allowed, s.watchBatch, zap.NewNop())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return "https://" + lis.Addr().String()
}

// client is user's client of url.
func (s setup) client(t testing.TB, url, user string) *clientv3.Client {
	t.Helper()
	return etcdtest.NewClientWith(t, s.pki.Options(url, s.pki.Client(t, user)))
}

// records is every key and value under /skydns/ and outside it, as root
// reads them from etcd.
func (s setup) records(t *testing.T) string {
	t.Helper()
	resp, err := s.etcd.Client.Get(t.Context(), "\x00", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, kv := range resp.Kvs {
		fmt.Fprintf(&b, "%s=%s@%d\n", kv.Key, kv.Value, kv.ModRevision)
	}
	return b.String()
}

// recordKey is a record the write attempts aim at.
const recordKey = "/skydns/local/cluster/svc/default/s0/x"

func TestTheRelayRefusesEveryWrite(t *testing.T) {
	s := newSetup(t)
	before := s.records(t)
	// A writer's identity upstream: only the filter stands in the way.
	url := s.startRelay(t, "writer", "reader")
	c := s.client(t, url, "reader")
	for _, write := range etcdtest.Writes(recordKey) {
		t.Run(write.Name+" is refused by the relay itself", func(t *testing.T) {
			refused := refusedCount(t)
			if err := write.Do(t.Context(), c); !errors.Is(err, rpctypes.ErrPermissionDenied) {
				t.Errorf("got %v, want %v", err, rpctypes.ErrPermissionDenied)
			}
			if refusedCount(t) != refused+1 {
				t.Error("kubesky_relay_refused_total did not count it")
			}
		})
	}
	if after := s.records(t); after != before {
		t.Errorf("etcd changed:\n%s\nwas:\n%s", after, before)
	}
}

// TestEtcdRefusesTheRelaysUserThePlainWrites: behind the filter, etcd
// refuses the relay's read-only user every write: a Put, a Delete, a Txn
// writing at any depth and a Compact (admin only since etcd 3.6.9).
func TestEtcdRefusesTheRelaysUserThePlainWrites(t *testing.T) {
	s := newSetup(t)
	before := s.records(t)
	direct := s.client(t, s.etcd.ClientURL(), "relay")
	for _, write := range etcdtest.Writes(recordKey) {
		if err := write.Do(t.Context(), direct); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s as the relay's user at etcd: got %v, want %v", write.Name, err, rpctypes.ErrPermissionDenied)
		}
	}
	if after := s.records(t); after != before {
		t.Errorf("etcd changed:\n%s\nwas:\n%s", after, before)
	}
}

// TestEtcdKeepsTheWriterInsideItsPrefix: kube2sky's user, which may write
// /skydns/, can neither Compact nor write outside its prefix, even from
// inside a nested Txn.
func TestEtcdKeepsTheWriterInsideItsPrefix(t *testing.T) {
	s := newSetup(t)
	before := s.records(t)
	writer := s.client(t, s.etcd.ClientURL(), "writer")
	outside := clientv3.OpPut("/other/key", `{"host":"192.0.2.66"}`)
	inside := clientv3.OpPut(recordKey, `{"host":"192.0.2.66"}`)
	for _, write := range []etcdtest.Attempt{
		{Name: "Compact", Do: func(ctx context.Context, c *clientv3.Client) error { _, err := c.Compact(ctx, 2); return err }},
		{Name: "a nested Txn's put outside /skydns/", Do: func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Txn(ctx).Then(inside, clientv3.OpTxn(nil, []clientv3.Op{outside}, nil)).Commit()
			return err
		}},
		{Name: "a put outside /skydns/ two Txns deep, in Else", Do: func(ctx context.Context, c *clientv3.Client) error {
			deep := clientv3.OpTxn(nil, nil, []clientv3.Op{clientv3.OpTxn(nil, []clientv3.Op{outside}, nil)})
			_, err := c.Txn(ctx).Then(deep).Commit()
			return err
		}},
	} {
		if err := write.Do(t.Context(), writer); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s as the writer: got %v, want %v", write.Name, err, rpctypes.ErrPermissionDenied)
		}
	}
	if after := s.records(t); after != before {
		t.Errorf("etcd changed:\n%s\nwas:\n%s", after, before)
	}
	if _, err := writer.Txn(t.Context()).Then(clientv3.OpTxn(nil, []clientv3.Op{inside}, nil)).Commit(); err != nil {
		t.Errorf("a nested Txn's put inside /skydns/ as the writer: %v", err)
	}
}

func refusedCount(t *testing.T) float64 {
	t.Helper()
	return gathered(t, "kubesky_relay_refused_total")
}

// gathered sums a metric's values in the default registry.
func gathered(t *testing.T, name string) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

func TestEveryOtherServiceIsUnimplemented(t *testing.T) {
	s := newSetup(t)
	c := s.client(t, s.startRelay(t, "relay", "reader"), "reader")
	calls := append(etcdtest.Administration(), etcdtest.Attempt{Name: "status", Do: func(ctx context.Context, c *clientv3.Client) error {
		_, err := c.Status(ctx, c.Endpoints()[0])
		return err
	}}, etcdtest.Attempt{Name: "member list", Do: func(ctx context.Context, c *clientv3.Client) error {
		_, err := c.MemberList(ctx)
		return err
	}})
	for _, call := range calls {
		if err := call.Do(t.Context(), c); status.Code(err) != codes.Unimplemented {
			t.Errorf("%s: got %v, want Unimplemented", call.Name, err)
		}
	}
}

func TestReadsAndWatchesPassAndIdenticalWatchesCoalesce(t *testing.T) {
	s := newSetup(t)
	url := s.startRelay(t, "relay", "reader")
	c := s.client(t, url, "reader")
	t.Run("a paged list at one revision, as skydns lists", func(t *testing.T) {
		var n int
		if _, err := etcdstore.Scan(t.Context(), c, "/skydns/", 2, 5*time.Second, func(*mvccpb.KeyValue) { n++ }); err != nil || n != 5 {
			t.Errorf("scanned %d keys, %v; want 5", n, err)
		}
	})
	t.Run("a read-only Txn", func(t *testing.T) {
		resp, err := c.Txn(t.Context()).If(clientv3.Compare(clientv3.CreateRevision("/skydns/local"), "=", 0)).
			Then(clientv3.OpGet("/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly())).Commit()
		if err != nil || !resp.Succeeded || resp.Responses[0].GetResponseRange().Count != 5 {
			t.Errorf("got %v, %v", resp, err)
		}
	})
	t.Run("two readers' watches of the prefix share one upstream watch and both see a change", func(t *testing.T) {
		// As skydns watches: from the revision after its list.
		resp, err := c.Get(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		from := clientv3.WithRev(resp.Header.Revision + 1)
		coalescing := gathered(t, "etcd_grpc_proxy_watchers_coalescing_total")
		first := c.Watch(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCreatedNotify(), from)
		<-first
		second := s.client(t, url, "reader").Watch(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCreatedNotify(), from)
		<-second
		polltest.True(t, "the second watch joining the first", func() bool {
			return gathered(t, "etcd_grpc_proxy_watchers_coalescing_total") > coalescing
		})
		s.etcd.Put(t, "/skydns/local/cluster/svc/default/new/x", `{"host":"10.0.0.9"}`)
		for i, w := range []clientv3.WatchChan{first, second} {
			select {
			case resp := <-w:
				if len(resp.Events) != 1 || !strings.HasSuffix(string(resp.Events[0].Kv.Key), "/new/x") {
					t.Errorf("watch %d: %+v", i, resp)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("watch %d saw no change", i)
			}
		}
	})
}

// TestAReaderWatchesThroughTheRelayOverEveryRangeAListWatcherTakesTurnsWith:
// the relay's user, holding what etcd-auth grants, may watch the prefix
// over each range skydns's watch moves to after a stall, with either
// Watch the relay serves, and a wider range is refused.
func TestAReaderWatchesThroughTheRelayOverEveryRangeAListWatcherTakesTurnsWith(t *testing.T) {
	s := newSetup(t)
	for _, batch := range []time.Duration{0, 250 * time.Millisecond} {
		t.Run(fmt.Sprintf("watch batch %s", batch), func(t *testing.T) {
			s.watchBatch = batch
			c := s.client(t, s.startRelay(t, "relay", "reader"), "reader")
			if err := etcdtest.WatchRangesErr(t.Context(), c, "/skydns/"); err != nil {
				t.Error(err)
			}
			if err := etcdtest.WatchErr(t.Context(), c, "/skydns/", etcdstore.WatchedEnd("/skydns/")+"\x00"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
				t.Errorf("watching past the widest range: %v, want permission denied", err)
			}
		})
	}
}

func TestOnlyAllowedReadersGetIn(t *testing.T) {
	s := newSetup(t)
	url := s.startRelay(t, "relay", "reader")
	t.Run("a certificate of the CA with another common name is refused", func(t *testing.T) {
		_, err := s.client(t, url, "writer").Get(t.Context(), "/skydns/", clientv3.WithPrefix())
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `"writer" is not a reader's`) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a certificate of another CA fails at the client's start", func(t *testing.T) {
		other := etcdtest.NewPKI(t)
		opts := s.pki.Options(url, other.Client(t, "reader"))
		if _, err := opts.New(nil); err == nil || !strings.Contains(err.Error(), "refused the TLS handshake") {
			t.Errorf("got %v", err)
		}
	})
}
