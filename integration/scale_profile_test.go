package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// saveHeapProfile writes kube2sky's heap profile (taken after a GC) to the
// file KUBESKY_SCALE_PROFILE names, when it names one; `go tool pprof`
// reads it (-sample_index=inuse_space or alloc_space).
func (r *scaleRun) saveHeapProfile() {
	if r.cfg.Profile == "" {
		return
	}
	if err := fetchToFile("http://"+r.k2s.HTTPAddr+"/debug/pprof/heap?gc=1", r.cfg.Profile); err != nil {
		r.b.Fatalf("kube2sky heap profile: %v", err)
	}
	r.b.Logf("kube2sky heap profile written to %s", r.cfg.Profile)
}

// fetchToFile copies the body of a GET to a file.
func fetchToFile(url, path string) error {
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
