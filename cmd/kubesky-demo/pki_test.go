package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestPKI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	args := []string{"pki", "--dir", dir, "--server", "https://kube-apiserver:6443",
		"--host-server", "https://127.0.0.1:16443", "--name", "kube-apiserver"}

	t.Run("it writes both kubeconfigs with their servers", func(t *testing.T) {
		code, out, errOut := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "wrote") {
			t.Fatalf("code %d: %s %s", code, out, errOut)
		}
		for file, server := range map[string]string{"kubeconfig": "https://kube-apiserver:6443", "kubeconfig-host": "https://127.0.0.1:16443"} {
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, file))
			if err != nil || cfg.Host != server || cfg.BearerToken == "" {
				t.Fatalf("%s: %v, %+v", file, err, cfg)
			}
		}
	})
	t.Run("a second run keeps the files", func(t *testing.T) {
		before := readFile(t, filepath.Join(dir, "tokens.csv"))
		code, out, _ := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "kept") || readFile(t, filepath.Join(dir, "tokens.csv")) != before {
			t.Fatalf("code %d, %q", code, out)
		}
	})
	t.Run("--force writes new ones", func(t *testing.T) {
		before := readFile(t, filepath.Join(dir, "tokens.csv"))
		code, _, _ := runMain(t, append(args, "--force")...)
		if code != 0 || readFile(t, filepath.Join(dir, "tokens.csv")) == before {
			t.Fatalf("code %d, token unchanged", code)
		}
	})
	t.Run("--dir is required", func(t *testing.T) {
		code, _, errOut := runMain(t, "pki")
		if code != 2 || !strings.Contains(errOut, "--dir is required") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("a directory that cannot be created is an error", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o600)
		code, _, errOut := runMain(t, "pki", "--dir", filepath.Join(file, "sub"))
		if code != 1 || errOut == "" {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
