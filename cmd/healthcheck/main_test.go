package main

import (
	"bytes"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func server(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHealthcheck(t *testing.T) {
	t.Run("a 200 answer exits 0 and prints the body", func(t *testing.T) {
		srv := server(t, http.StatusOK, "ok\n")
		code, out, _ := runArgs(t, srv.URL+"/readyz")
		if code != 0 || out != "ok\n" {
			t.Fatalf("code %d, stdout %q", code, out)
		}
	})
	t.Run("quiet prints nothing", func(t *testing.T) {
		srv := server(t, http.StatusOK, "ok")
		if code, out, _ := runArgs(t, "-q", srv.URL); code != 0 || out != "" {
			t.Fatalf("code %d, stdout %q", code, out)
		}
	})
	t.Run("a 503 answer exits 1 and says why", func(t *testing.T) {
		srv := server(t, http.StatusServiceUnavailable, "not synced")
		code, _, errOut := runArgs(t, srv.URL)
		if code != 1 || !strings.Contains(errOut, "503") || !strings.Contains(errOut, "not synced") {
			t.Fatalf("code %d, stderr %q", code, errOut)
		}
	})
	t.Run("a closed port exits 1", func(t *testing.T) {
		srv := server(t, http.StatusOK, "ok")
		url := srv.URL
		srv.Close()
		if code, _, _ := runArgs(t, url); code != 1 {
			t.Fatalf("code %d, want 1", code)
		}
	})
}

func TestHealthcheckOverTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.crt")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("an unknown certificate is refused", func(t *testing.T) {
		if code, _, _ := runArgs(t, srv.URL); code != 1 {
			t.Fatalf("code %d, want 1", code)
		}
	})
	t.Run("the CA given with --cacert is trusted", func(t *testing.T) {
		if code, _, errOut := runArgs(t, "--cacert", ca, srv.URL); code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
	})
	t.Run("--insecure accepts any certificate", func(t *testing.T) {
		if code, _, errOut := runArgs(t, "--insecure", srv.URL); code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
	})
}

func TestHealthcheckHelpListsTheFlags(t *testing.T) {
	code, out, _ := runArgs(t, "--help")
	if code != 0 || !strings.Contains(out, "--cacert") || !strings.Contains(out, "-q, --quiet") {
		t.Fatalf("code %d, %q", code, out)
	}
}

func TestHealthcheckRejectsBadArguments(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.pem")
	os.WriteFile(empty, nil, 0o600)
	cases := map[string]struct {
		args []string
		code int
		want string
	}{
		"no URL":                         {nil, 2, "exactly one URL"},
		"two URLs":                       {[]string{"http://a", "http://b"}, 2, "exactly one URL"},
		"an unknown flag":                {[]string{"--nope", "http://a"}, 2, "unknown flag"},
		"a zero timeout":                 {[]string{"--timeout=0s", "http://a"}, 2, "--timeout"},
		"a URL without a scheme":         {[]string{"127.0.0.1:8081/healthz"}, 1, "not an http://"},
		"a CA file without certificates": {[]string{"--cacert", empty, "https://127.0.0.1:1"}, 1, "no PEM certificate"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runArgs(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Fatalf("code %d (want %d), stderr %q (want %q)", code, c.code, errOut, c.want)
			}
		})
	}
}
