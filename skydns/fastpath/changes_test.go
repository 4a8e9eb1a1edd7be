package fastpath

import (
	"slices"
	"testing"
)

func TestChangesSince(t *testing.T) {
	c := NewChanges()
	c.Record(0, 5, nil, true)
	c.Record(5, 7, []string{"a.test."}, false)
	c.Record(7, 9, []string{"b.test.", "c.test."}, false)
	tests := []struct {
		name     string
		from, to uint64
		want     []string
		known    bool
	}{
		{"one step", 5, 7, []string{"a.test."}, true},
		{"two steps add up", 5, 9, []string{"b.test.", "c.test.", "a.test."}, true},
		{"a full change is not known", 0, 7, nil, false},
		{"a version never recorded is not known", 6, 9, nil, false},
		{"a future version is not known", 9, 11, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, known := c.since(tc.from, tc.to)
			if known != tc.known || !slices.Equal(got, tc.want) {
				t.Fatalf("since(%d, %d) = %v, %v; want %v, %v", tc.from, tc.to, got, known, tc.want, tc.known)
			}
		})
	}
	t.Run("changes older than the last 64 are forgotten", func(t *testing.T) {
		for v := uint64(9); v < 9+changesKept; v++ {
			c.Record(v, v+1, []string{"d.test."}, false)
		}
		if _, known := c.since(7, 9+changesKept); known {
			t.Fatal("still known")
		}
		if got, known := c.since(10, 9+changesKept); !known || len(got) != changesKept-1 {
			t.Fatalf("got %d names, %v; want the last %d", len(got), known, changesKept-1)
		}
	})
	t.Run("no log knows nothing", func(t *testing.T) {
		var none *Changes
		if _, known := none.since(1, 2); known {
			t.Fatal("known")
		}
	})
}

func TestParentName(t *testing.T) {
	for name, want := range map[string]string{"a.b.test.": "b.test.", "test.": ".", ".": "."} {
		if got := parentName(name); got != want {
			t.Errorf("parentName(%q) = %q, want %q", name, got, want)
		}
	}
}
