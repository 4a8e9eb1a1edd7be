package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// An image is written as an OCI image layout in a tar file, the form
// `ctr images import` reads: oci-layout, index.json naming the image, and
// the blobs (gzipped layers, the config, the manifest). Every timestamp is
// zero, so the same inputs give the same bytes.

// entry is one file of a layer.
type entry struct {
	name     string // path in the image, without the leading slash
	src      string // the host file to copy (regular files)
	link     string // the target (symlinks)
	dir      bool
	uid, gid int
	mode     int64
}

// layer is a list of entries, or a whole root filesystem (rootfs).
type layer struct {
	entries []entry
	rootfs  string
}

// image is what to build and the names to import it under.
type image struct {
	names      []string // fully qualified, as the CRI normalises them
	layers     []layer
	entrypoint []string
	cmd        []string
	user       string
}

// file is a root-owned regular file from the host.
func file(name, src string) entry { return entry{name: name, src: src, mode: 0o755} }

// ownedDir is a directory owned by uid:gid.
func ownedDir(name string, uid int) entry {
	return entry{name: name, dir: true, uid: uid, gid: uid, mode: 0o755}
}

var epoch = time.Unix(0, 0)

// writeLayer writes l as a gzipped tar and returns the blob, its digest and
// the digest of the uncompressed tar (the diff ID).
func writeLayer(l layer) (blob []byte, digest, diffID string, err error) {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	raw := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, raw))
	if l.rootfs != "" {
		err = addRootFS(tw, l.rootfs)
	} else {
		err = addEntries(tw, l.entries)
	}
	if err != nil {
		return nil, "", "", err
	}
	if err := tw.Close(); err != nil {
		return nil, "", "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", "", err
	}
	return gz.Bytes(), sha(gz.Bytes()), "sha256:" + hex.EncodeToString(raw.Sum(nil)), nil
}

func addEntries(tw *tar.Writer, entries []entry) error {
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.dir:
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		case e.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		default:
			if err := addFile(tw, h, e.src); err != nil {
				return err
			}
			continue
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	return nil
}

func addFile(tw *tar.Writer, h *tar.Header, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}

// addRootFS adds every directory, regular file and symlink under root with
// its mode and owner. Device nodes, sockets and pipes are left out: the
// runtime provides /dev.
func addRootFS(tw *tar.Writer, root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		st := info.Sys().(*syscall.Stat_t)
		h := &tar.Header{Name: rel, Mode: int64(info.Mode().Perm()), Uid: int(st.Uid), Gid: int(st.Gid), ModTime: epoch, Format: tar.FormatPAX}
		if info.Mode()&fs.ModeSetuid != 0 {
			h.Mode |= 0o4000
		}
		if info.Mode()&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		switch {
		case info.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, rel+"/"
		case info.Mode()&fs.ModeSymlink != 0:
			if h.Linkname, err = os.Readlink(path); err != nil {
				return err
			}
			h.Typeflag = tar.TypeSymlink
		case info.Mode().IsRegular():
			return addFile(tw, h, path)
		default:
			return nil
		}
		return tw.WriteHeader(h)
	})
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// writeOCI writes img as an OCI layout tar at path.
func writeOCI(img image, path string) error {
	blobs := map[string][]byte{}
	var layers []descriptor
	var diffIDs []string
	for _, l := range img.layers {
		blob, digest, diffID, err := writeLayer(l)
		if err != nil {
			return err
		}
		blobs[digest] = blob
		layers = append(layers, descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: digest, Size: len(blob)})
		diffIDs = append(diffIDs, diffID)
	}
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config": map[string]any{
			"Entrypoint": img.entrypoint,
			"Cmd":        img.cmd,
			"User":       img.user,
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	blobs[sha(config)] = config
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: sha(config), Size: len(config)},
		"layers":        layers,
	})
	blobs[sha(manifest)] = manifest
	var index []descriptor
	for _, name := range img.names {
		index = append(index, descriptor{
			MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: sha(manifest), Size: len(manifest),
			Annotations: map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name[strings.LastIndex(name, ":")+1:]},
		})
	}
	indexJSON, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": index})
	return writeLayoutTar(path, blobs, indexJSON)
}

// writeLayoutTar writes the layout's files into a tar at path, atomically.
func writeLayoutTar(path string, blobs map[string][]byte, index []byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := add("index.json", index); err != nil {
		return err
	}
	for _, digest := range slices.Sorted(maps.Keys(blobs)) {
		if err := add("blobs/sha256/"+strings.TrimPrefix(digest, "sha256:"), blobs[digest]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// inputKey sums what an image is made of (its definition, and the size and
// modification time of every source file), so an unchanged image is not
// built again.
func inputKey(img image) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q\n", img.names, img.entrypoint, img.cmd, img.user)
	stamp := func(path string) error {
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d %v\n", path, info.Size(), info.ModTime().UnixNano(), info.Mode())
		return nil
	}
	for _, l := range img.layers {
		if l.rootfs != "" {
			if err := filepath.WalkDir(l.rootfs, func(path string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return stamp(path)
			}); err != nil {
				return "", err
			}
			continue
		}
		for _, e := range l.entries {
			fmt.Fprintf(h, "%+v\n", e)
			if e.src != "" {
				if err := stamp(e.src); err != nil {
					return "", err
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
