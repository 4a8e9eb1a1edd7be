package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadObjects(t *testing.T) {
	t.Run("no paths means the built-in examples", func(t *testing.T) {
		objs, err := loadObjects(nil)
		if err != nil || len(objs) != 4 {
			t.Fatalf("%d objects, %v", len(objs), err)
		}
	})
	dir := t.TempDir()
	svc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\nspec:\n  ports: [{port: 80}]\n"
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(strings.ReplaceAll(svc, "%s", "a")), 0o600)
	os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(strings.ReplaceAll(svc, "%s", "b")), 0o600)
	t.Run("files and directories are read in order", func(t *testing.T) {
		objs, err := loadObjects([]string{filepath.Join(dir, "b.yaml"), dir})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range objs {
			names = append(names, o.GetName())
		}
		if strings.Join(names, ",") != "b,a,b" {
			t.Fatalf("names %v", names)
		}
	})
	t.Run("a missing file is an error", func(t *testing.T) {
		if _, err := loadObjects([]string{filepath.Join(dir, "nope.yaml")}); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("apply exits 2 for a file that is not a manifest", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.yml")
		os.WriteFile(bad, []byte("kind: Service\n"), 0o600)
		code, _, errOut := runMain(t, "apply", "--kubeconfig", filepath.Join(dir, "none"), "-f", bad)
		if code != 2 || !strings.Contains(errOut, "bad.yml: document 1: no apiVersion") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
}
