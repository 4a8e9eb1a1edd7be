package debughttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestMountPprofServesTheIndexAndAHeapProfile(t *testing.T) {
	mux := http.NewServeMux()
	MountPprof(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for path, want := range map[string]string{"/debug/pprof/": "goroutine", "/debug/pprof/heap?debug=1": "heap profile"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
}

func TestFetchWritesTheBodyAndRefusesAnotherStatus(t *testing.T) {
	mux := http.NewServeMux()
	MountPprof(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	path := t.TempDir() + "/heap"
	if err := Fetch(t.Context(), srv.URL+"/debug/pprof/heap?debug=1", path); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), "heap profile") {
		t.Errorf("the file holds %.40q, %v; want a heap profile", data, err)
	}
	if err := Fetch(t.Context(), srv.URL+"/debug/pprof/nothere", path); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a missing profile: %v, want an error naming 404", err)
	}
}
