package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readTar returns the files of a tar by name.
func readTar(t *testing.T, r io.Reader) map[string]*tar.Header {
	t.Helper()
	headers := map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return headers
		}
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name] = h
	}
}

func TestWriteOCI(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := image{
		names:      []string{"docker.io/kubesky/test:latest"},
		layers:     []layer{{entries: []entry{file("server", bin), ownedDir("data", kubeskyUID), {name: "sh", link: "server"}}}},
		entrypoint: []string{"/server"},
		user:       "65532:65532",
	}
	out := filepath.Join(dir, "img.tar")
	if err := writeOCI(img, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		files[h.Name], _ = io.ReadAll(tr)
	}

	t.Run("index.json names the image for ctr import", func(t *testing.T) {
		var index struct {
			Manifests []descriptor
		}
		if err := json.Unmarshal(files["index.json"], &index); err != nil {
			t.Fatal(err)
		}
		if len(index.Manifests) != 1 || index.Manifests[0].Annotations["io.containerd.image.name"] != img.names[0] {
			t.Fatalf("index %s", files["index.json"])
		}
	})
	t.Run("every blob is stored under its digest", func(t *testing.T) {
		for name, blob := range files {
			if strings.HasPrefix(name, "blobs/sha256/") && sha(blob) != "sha256:"+strings.TrimPrefix(name, "blobs/sha256/") {
				t.Errorf("%s holds %s", name, sha(blob))
			}
		}
	})
	t.Run("the layer keeps modes, owners and links", func(t *testing.T) {
		var layerBlob []byte
		for name, blob := range files {
			if zr, err := gzip.NewReader(bytes.NewReader(blob)); err == nil && strings.HasPrefix(name, "blobs/") {
				layerBlob, _ = io.ReadAll(zr)
			}
		}
		headers := readTar(t, bytes.NewReader(layerBlob))
		if h := headers["server"]; h == nil || h.Mode != 0o755 || h.Size != 10 {
			t.Errorf("server: %+v", h)
		}
		if h := headers["data/"]; h == nil || h.Uid != kubeskyUID {
			t.Errorf("data/: %+v", h)
		}
		if h := headers["sh"]; h == nil || h.Linkname != "server" {
			t.Errorf("sh: %+v", h)
		}
	})
	t.Run("the same inputs give the same bytes", func(t *testing.T) {
		again := filepath.Join(dir, "again.tar")
		if err := writeOCI(img, again); err != nil {
			t.Fatal(err)
		}
		if second, _ := os.ReadFile(again); !bytes.Equal(second, data) {
			t.Fatalf("%d bytes, then %d different ones", len(data), len(second))
		}
	})
	t.Run("the input key changes with a source file", func(t *testing.T) {
		before, err := inputKey(img)
		if err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(bin, later, later); err != nil {
			t.Fatal(err)
		}
		if after, _ := inputKey(img); after == before {
			t.Fatal("key unchanged after the binary changed")
		}
	})
	t.Run("a missing source file is an error", func(t *testing.T) {
		bad := image{names: []string{"x:1"}, layers: []layer{{entries: []entry{file("gone", filepath.Join(dir, "gone"))}}}}
		if err := writeOCI(bad, filepath.Join(dir, "bad.tar")); err == nil {
			t.Fatal("want an error")
		}
	})
}
