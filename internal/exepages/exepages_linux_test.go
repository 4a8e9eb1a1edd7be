package exepages

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestParseLineKeepsOnlyTheExecutablesReadOnlyMappings(t *testing.T) {
	const exe = "/skydns node"
	for _, tc := range []struct {
		line string
		want Mapping
		ok   bool
	}{
		{"00400000-00c00000 r-xp 00000000 08:01 42 /skydns node", Mapping{0x400000, 0xc00000}, true},
		{"00c00000-01400000 r--p 00800000 08:01 42 /skydns node", Mapping{0xc00000, 0x1400000}, true},
		{"01400000-01500000 rw-p 01000000 08:01 42 /skydns node", Mapping{}, false}, // data: written
		{"7f0000000000-7f0000100000 r--p 00000000 08:01 7 /lib/other", Mapping{}, false},
		{"c000000000-c000400000 rw-p 00000000 00:00 0", Mapping{}, false},           // heap: no file
		{"00c00000-00400000 r--p 00000000 08:01 42 /skydns node", Mapping{}, false}, // end before start
		{"zz-01400000 r--p 00000000 08:01 42 /skydns node", Mapping{}, false},       // not hex
		{"00400000 r--p 00000000 08:01 42 /skydns node", Mapping{}, false},          // no range
		{"", Mapping{}, false},
	} {
		got, ok := parseLine(tc.line, exe)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseLine(%q) = %v, %v; want %v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDropLowersTheBinarysResidentPages drops the test binary's own
// read-only pages and checks, from /proc/self/smaps, that fewer of them
// are resident, and that the program goes on running code and reading
// its read-only data.
func TestDropLowersTheBinarysResidentPages(t *testing.T) {
	before := exeResident(t)
	n, err := Drop()
	if err != nil {
		t.Fatal(err)
	}
	after := exeResident(t)
	t.Logf("read-only mappings %d KiB; resident %d KiB before, %d KiB after", n>>10, before>>10, after>>10)
	if n == 0 || after >= before {
		t.Fatalf("resident %d KiB before, %d KiB after dropping %d KiB of mappings: want fewer after", before>>10, after>>10, n>>10)
	}
	if got := strconv.Itoa(12345) + strings.ToUpper("ok"); got != "12345OK" {
		t.Fatalf("code run after the drop returned %q", got)
	}
}

// exeResident sums the resident bytes of the test binary's read-only
// mappings.
func exeResident(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	byPerms, err := Resident(os.Getpid(), exe)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for perms, n := range byPerms {
		if perms[1] == '-' {
			total += n
		}
	}
	return total
}
