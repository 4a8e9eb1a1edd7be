package skydns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubesky/kubesky/internal/debughttp"
)

// newHTTPHandler serves /healthz (200 while the process runs), /readyz
// (200 when every check of ready holds, else 503 and the first failure;
// with ?verbose every check and the snapshot's freshness), /metrics, and
// with withPprof the net/http/pprof handlers.
func newHTTPHandler(ready func() readiness, reg *prometheus.Registry, withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		rd := ready()
		err := rd.err()
		if r.URL.Query().Has("verbose") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(readyStatus(err))
			rd.writeVerbose(w)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	if withPprof {
		debughttp.MountPprof(mux)
	}
	return mux
}

func readyStatus(err error) int {
	if err != nil {
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

// httpServer is the HTTP listener and its serving goroutine.
type httpServer struct {
	srv  *http.Server
	addr string
	done chan struct{} // closed when Serve returned
}

// startHTTP binds addr and serves h on it.
func startHTTP(addr string, h http.Handler, logger *slog.Logger) (*httpServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on --http-addr %s: %w", addr, err)
	}
	s := &httpServer{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("HTTP server stopped", "addr", s.addr, "err", err)
		}
	}()
	return s, nil
}

// shutdown stops the server, waiting for requests in progress until ctx
// ends.
func (s *httpServer) shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return err
}
