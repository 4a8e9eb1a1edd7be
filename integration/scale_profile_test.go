package integration

import "github.com/kubesky/kubesky/internal/debughttp"

// saveHeapProfile writes kube2sky's heap profile (taken after a GC) to the
// file KUBESKY_SCALE_PROFILE names, when it names one; `go tool pprof`
// reads it (-sample_index=inuse_space or alloc_space).
func (r *scaleRun) saveHeapProfile() {
	if r.cfg.Profile == "" {
		return
	}
	if err := debughttp.Fetch(r.b.Context(), "http://"+r.k2s.HTTPAddr+"/debug/pprof/heap?gc=1", r.cfg.Profile); err != nil {
		r.b.Fatalf("kube2sky heap profile: %v", err)
	}
	r.b.Logf("kube2sky heap profile written to %s", r.cfg.Profile)
}
