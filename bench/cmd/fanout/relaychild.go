package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/kubesky/kubesky/skydns/relay"
)

// Tiers the proxies can be.
const (
	tierGRPCProxy    = "grpc-proxy"    // `etcd grpc-proxy start`
	tierRelay        = "relay"         // skydns's relay, each revision sent alone (--watch-batch 0)
	tierRelayBatched = "relay-batched" // skydns's relay, one response a window (--watch-batch)
)

// relayServeArg makes this binary a relay process: the relay's gRPC
// server (relay.NewServer) without TLS, as the grpc-proxies run here,
// with /metrics and /debug/pprof/ on its HTTP address.
const relayServeArg = "relay-serve"

// serveRelay is the relay process's main.
func serveRelay(args []string) error {
	fs := flag.NewFlagSet(relayServeArg, flag.ContinueOnError)
	endpoints := fs.String("endpoints", "", "etcd members, comma-separated")
	listen := fs.String("listen", "", "gRPC host:port")
	web := fs.String("http", "", "/metrics and /debug/pprof/ host:port")
	batch := fs.Duration("watch-batch", 0, "relay.Config.WatchBatch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	upstream, err := newClient(strings.Split(*endpoints, ","))
	if err != nil {
		return err
	}
	defer upstream.Close()
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := relay.NewServer(ctx, upstream, nil, nil, *batch, zap.NewNop())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	webSrv := &http.Server{Addr: *web, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(lis) }()
	go func() { errc <- webSrv.ListenAndServe() }()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	srv.Stop()
	_ = webSrv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// relayArgv is a relay process's command line after the binary.
func relayArgv(members []string, listen, web string, batch time.Duration) []string {
	return []string{relayServeArg, "--endpoints", strings.Join(members, ","), "--listen", listen, "--http", web,
		"--watch-batch", batch.String()}
}

// checkTier says whether name is a tier.
func checkTier(name string) error {
	switch name {
	case tierGRPCProxy, tierRelay, tierRelayBatched:
		return nil
	}
	return fmt.Errorf("%q: want %s, %s or %s", name, tierGRPCProxy, tierRelay, tierRelayBatched)
}
