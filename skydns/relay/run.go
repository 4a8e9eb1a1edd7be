package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/internal/logging"
)

// shutdownTimeout bounds the graceful stop: readers' watches never end by
// themselves, so after it they are cut and reconnect to another relay.
const shutdownTimeout = 5 * time.Second

// Run serves until ctx ends. A credential that is missing, expired, or
// that etcd or the CA refuses is an error before anything is served.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	tlsConfig, err := ServerTLS(cfg)
	if err != nil {
		return err
	}
	upstream, err := cfg.Etcd.New(logging.Zap(logger.Handler()))
	if err != nil {
		return err
	}
	defer upstream.Close()
	lis, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("--listen-addr: %w", err)
	}
	httpLis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		lis.Close()
		return fmt.Errorf("--http-addr: %w", err)
	}
	watchCtx, stopWatches := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatches()
	srv := NewServer(watchCtx, upstream, tlsConfig, cfg.AllowedCNs, cfg.WatchBatch, logging.Zap(logger.Handler()))
	web := &http.Server{Handler: healthMux(upstream, cfg), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(lis) }()
	go func() { errc <- web.Serve(httpLis) }()
	logger.Info("relay serving", "listen", lis.Addr().String(), "http", httpLis.Addr().String(), "allowed", cfg.AllowedCNs, "etcd", cfg.Etcd.Endpoints)
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	stop(srv, web)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// stop ends the gRPC server gracefully within shutdownTimeout, then at once.
func stop(srv interface {
	GracefulStop()
	Stop()
}, web *http.Server) {
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(shutdownTimeout):
		srv.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = web.Shutdown(ctx)
}

// healthMux serves /healthz (the process), /readyz (etcd answers the
// relay's read of the prefix) and /metrics (grpcproxy's and the relay's).
func healthMux(upstream *clientv3.Client, cfg Config) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), cfg.Etcd.RequestTimeout)
		defer cancel()
		if _, err := upstream.Get(ctx, cfg.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
			http.Error(w, "etcd: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", promhttp.Handler())
	return mux
}
