package kube2sky

import (
	"slices"
	"testing"
)

func TestKeyChunksTileTheSubtree(t *testing.T) {
	t.Parallel()
	const prefix = "/skydns/local/cluster/pod/"
	addresses := []string{"a/10-0-0-1", "a/10-0-0-2", "b/10-0-0-1", "b/fd00--1", "c/10-0-0-9"}
	for _, size := range []int{1, 2, 5, 10} {
		chunks := keyChunks(prefix, addresses, size)
		if want := max(1, (len(addresses)+size-1)/size); len(chunks) != want {
			t.Fatalf("size %d: %d chunks, want %d", size, len(chunks), want)
		}
		if chunks[0].from != prefix || chunks[len(chunks)-1].end != "/skydns/local/cluster/pod0" {
			t.Errorf("size %d: chunks span %q to %q, want the whole subtree", size, chunks[0].from, chunks[len(chunks)-1].end)
		}
		var got []string
		for i, ch := range chunks {
			if i > 0 && ch.from != chunks[i-1].end {
				t.Errorf("size %d: chunk %d starts at %q, the last ended at %q", size, i, ch.from, chunks[i-1].end)
			}
			for _, a := range ch.starts {
				if key := prefix + a; key < ch.from || key >= ch.end {
					t.Errorf("size %d: %q is outside its chunk [%q, %q)", size, key, ch.from, ch.end)
				}
			}
			got = append(got, ch.starts...)
		}
		if !slices.Equal(got, addresses) {
			t.Errorf("size %d: chunks hold %q, want %q", size, got, addresses)
		}
	}
	if chunks := keyChunks(prefix, nil, 10); len(chunks) != 1 || chunks[0].from != prefix {
		t.Errorf("no addresses: %+v, want one chunk over the subtree", chunks)
	}
}

func TestSubtreeGapsCoverAllButTheInnerSubtrees(t *testing.T) {
	t.Parallel()
	got := subtreeGaps("/z/", "/z/svc/", "/z/pod/")
	want := []keyRange{{"/z/", "/z/pod/"}, {"/z/pod0", "/z/svc/"}, {"/z/svc0", "/z0"}}
	if !slices.Equal(got, want) {
		t.Errorf("subtreeGaps = %q, want %q", got, want)
	}
}
