package hosts

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
)

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// FuzzRecords checks what must hold for any text: every non-blank,
// non-comment line is either served or reported (with its key and a line
// number inside the text), keys are sorted, unique and under one of the
// domains or the reverse tree, and every value is an address or, for a
// PTR, a name in one of the domains.
func FuzzRecords(f *testing.F) {
	f.Add("10.0.0.5 db1.example.corp db1 # c\n\nfd00::1 v6\r\n")
	f.Add("bad\n10.0.0.1\n::ffff:1.2.3.4 x.hosts.cluster.local.\n1.2.3.4 example.corp")
	f.Add("# only a comment\n\t\n1.1.1.1 a b c d e f\n1.1.1.1 a")
	f.Fuzz(func(t *testing.T, text string) {
		entries, problems := Records(withExtra, map[string]string{"k": text})
		lines := strings.Split(text, "\n")
		for _, p := range problems {
			if p.Key != "k" || p.Line < 1 || p.Line > len(lines) {
				t.Fatalf("problem %v: line outside 1..%d", p, len(lines))
			}
		}
		keys := make([]string, len(entries))
		for i, e := range entries {
			keys[i] = e.Key
			checkEntry(t, e.Key, e.Record.Host)
		}
		if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
			t.Fatalf("keys not sorted and unique: %v", keys)
		}
		content := 0
		for _, l := range lines {
			if c, _, _ := strings.Cut(l, "#"); strings.TrimSpace(c) != "" {
				content++
			}
		}
		if parsed, bad := Parse("k", text); len(parsed)+len(bad) != content {
			t.Fatalf("%d lines with content, but %d parsed and %d reported", content, len(parsed), len(bad))
		}
	})
}

func checkEntry(t *testing.T, key, host string) {
	t.Helper()
	switch {
	case strings.HasPrefix(key, "/skydns/arpa/"):
		if !strings.HasSuffix(host, ".example.corp.") {
			t.Fatalf("PTR %s → %q, want a name in example.corp.", key, host)
		}
		if _, ok := contract.AddrFromReverse(strings.TrimSuffix(mustName(t, key), ".")); !ok {
			t.Fatalf("PTR key %s is not an address", key)
		}
	case strings.HasPrefix(key, "/skydns/local/cluster/hosts/"), strings.HasPrefix(key, "/skydns/corp/example/"):
		if _, err := netip.ParseAddr(host); err != nil {
			t.Fatalf("%s → %q, want an address", key, host)
		}
	default:
		t.Fatalf("key %s outside the domains", key)
	}
}

func mustName(t *testing.T, key string) string {
	t.Helper()
	name, ok := contract.Name("/skydns", key)
	if !ok {
		t.Fatalf("key %s has no name", key)
	}
	return name
}
