package relay_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/skydns/relay"
)

// watchers is how many readers watch the prefix through the tier.
const watchers = 100

// BenchmarkFanOut measures one change delivered to 100 readers watching
// /skydns/ through the tier, with TLS and client certificates on both
// sides, for the relay and for what etcd's grpc-proxy serves (grpcproxy's
// KV and Watch on a plain gRPC server): the difference is the relay's
// write filter and common-name check.
//
//	go test -run '^$' -bench FanOut -benchtime 200x ./skydns/relay
func BenchmarkFanOut(b *testing.B) {
	for _, tier := range []string{"grpc-proxy", "relay"} {
		b.Run(tier, func(b *testing.B) {
			s := newSetup(b)
			url := s.startTier(b, tier)
			events := make(chan struct{}, 2*watchers)
			for range watchers {
				w := s.client(b, url, "reader").Watch(b.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
				<-w
				go drain(w, events)
			}
			b.ResetTimer()
			for i := range b.N {
				s.etcd.Put(b, "/skydns/local/cluster/svc/default/bench/x", fmt.Sprint(i))
				for range watchers {
					select {
					case <-events:
					case <-time.After(10 * time.Second):
						b.Fatalf("change %d: not every watcher saw it", i)
					}
				}
			}
		})
	}
}

// drain reads a watch as a reader does, at once, telling events of each
// event.
func drain(w clientv3.WatchChan, events chan<- struct{}) {
	for resp := range w {
		for range resp.Events {
			events <- struct{}{}
		}
	}
}

// startTier serves the relay, or grpcproxy's KV and Watch as etcd's
// grpc-proxy does, in front of etcd as the user relay, with TLS.
func (s setup) startTier(b *testing.B, tier string) string {
	if tier == "relay" {
		return s.startRelay(b, "relay", "reader")
	}
	upstream := etcdtest.NewClientWith(b, s.pki.Options(s.etcd.ClientURL(), s.pki.Client(b, "relay")))
	server := s.pki.Server()
	tlsConfig, err := relay.ServerTLS(relay.Config{CertFile: server.CertFile, KeyFile: server.KeyFile, TrustedCAFile: s.pki.CAFile})
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(tlsConfig)))
	kv, _ := grpcproxy.NewKvProxy(upstream)
	watch, _ := grpcproxy.NewWatchProxy(context.Background(), zap.NewNop(), upstream)
	pb.RegisterKVServer(srv, kv)
	pb.RegisterWatchServer(srv, watch)
	go func() { _ = srv.Serve(lis) }()
	b.Cleanup(srv.Stop)
	return "https://" + lis.Addr().String()
}
