package skydns

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubesky/kubesky/internal/debughttp"
	"github.com/kubesky/kubesky/skydns/fastpath"
)

// newHTTPHandler serves /healthz (200 while the process runs), /readyz
// (200 when every check of ready holds, else 503 and the first failure;
// with ?verbose every check and the snapshot's freshness), /readyz/forward
// (503 while a forwarding loop is found: see LoopChecker), /metrics, and
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
	mux.HandleFunc("GET /readyz/forward", func(w http.ResponseWriter, _ *http.Request) {
		for _, c := range ready().reported {
			if c.err != nil {
				http.Error(w, c.err.Error(), http.StatusServiceUnavailable)
				return
			}
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

// listenHTTP binds addr (--http-addr), with SO_REUSEPORT when shared.
func listenHTTP(addr string, shared bool) (net.Listener, error) {
	lc := net.ListenConfig{}
	if shared {
		lc.Control = fastpath.ReusePort
	}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on --http-addr %s: %w", addr, err)
	}
	return ln, nil
}

// listenHealthSocket binds the Unix socket path (--health-socket),
// removing a socket file a previous process left there. A file there
// that is not a socket is an error.
func listenHealthSocket(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("--health-socket %s: exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("--health-socket %s: removing the stale socket: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on --health-socket %s: %w", path, err)
	}
	return ln, nil
}

// startHTTP serves h on ln.
func startHTTP(ln net.Listener, h http.Handler, logger *slog.Logger) *httpServer {
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
	return s
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
