// Package debughttp mounts Go's profiling endpoints (net/http/pprof) on a
// daemon's HTTP mux, for both daemons' --pprof flag.
package debughttp

import (
	"net/http"
	"net/http/pprof"
)

// MountPprof serves net/http/pprof under /debug/pprof/ on mux: the index,
// heap and goroutine profiles, a CPU profile (/debug/pprof/profile?seconds=N)
// and an execution trace.
func MountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
