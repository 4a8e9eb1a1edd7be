package relay

import (
	"context"
	"crypto/tls"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// refusedTotal counts the writes the relay refused, by method. It lives
// in Prometheus's default registry, beside grpcproxy's own metrics.
var refusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kubesky_relay_refused_total",
	Help: "Requests the read-only relay refused, by gRPC method (Put, DeleteRange, Compact, Txn).",
}, []string{"method"})

func init() { prometheus.MustRegister(refusedTotal) }

// NewServer is the relay's gRPC server in front of upstream: KV for reads
// only (ReadOnlyKV over grpcproxy's KV proxy, with its range cache) and
// Watch, which lives until ctx ends: BatchingWatch with watchBatch as its
// window, or with watchBatch 0 grpcproxy's Watch proxy, which sends each
// revision to each watcher on its own. With tlsConfig nil
// it serves plain gRPC and lets every caller in (tests of the filter);
// otherwise only client certificates with one of allowed as common name.
func NewServer(ctx context.Context, upstream *clientv3.Client, tlsConfig *tls.Config, allowed []string, watchBatch time.Duration, lg *zap.Logger) *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(newFrameCodec()),
		grpc.MaxConcurrentStreams(math.MaxUint32),
		// Readers ping every 10 s (etcdstore's keepalive); gRPC's default
		// policy would hang up on them.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second}),
	}
	if tlsConfig != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConfig)))
		opts = append(opts, AllowCommonNames(allowed)...)
	}
	srv := grpc.NewServer(opts...)
	kv, _ := grpcproxy.NewKvProxy(upstream)
	pb.RegisterKVServer(srv, NewReadOnlyKV(kv, func(method string) { refusedTotal.WithLabelValues(method).Inc() }))
	if watchBatch > 0 {
		pb.RegisterWatchServer(srv, NewBatchingWatch(ctx, upstream, watchBatch))
	} else {
		watch, _ := grpcproxy.NewWatchProxy(ctx, lg, upstream)
		pb.RegisterWatchServer(srv, watch)
	}
	return srv
}
