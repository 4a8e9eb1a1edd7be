package callgrind

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Categories are where a Go DNS server's instructions go, in the order
// tables list them. Category names one for a source file.
var Categories = []string{
	CatSkyDNS, CatTree, CatMiekg, CatStack, CatGC, CatAlloc, CatNet, CatRuntime, CatOther,
}

// The categories.
const (
	CatSkyDNS  = "this module's code (skydns: resolver, snapshot, server; or the fixed handler)"
	CatTree    = "snapshot table (skydns/snapshot's packed leaves)"
	CatMiekg   = "miekg/dns (unpack, pack, serve loop)"
	CatStack   = "goroutine stack growth (copystack, unwinding)"
	CatGC      = "garbage collection"
	CatAlloc   = "allocation"
	CatNet     = "net, internal/poll, syscalls"
	CatRuntime = "rest of the Go runtime (scheduler, netpoll, channels, time)"
	CatOther   = "everything else"
)

var categoryRules = []struct {
	pattern *regexp.Regexp
	cat     string
}{
	{regexp.MustCompile(`kubesky/kubesky/skydns/snapshot/table\.go$`), CatTree},
	{regexp.MustCompile(`kubesky/kubesky/`), CatSkyDNS},
	{regexp.MustCompile(`miekg/dns`), CatMiekg},
	{regexp.MustCompile(`(^|/)runtime/(symtab|stack|traceback|stkframe|preempt)\.go$`), CatStack},
	{regexp.MustCompile(`(^|/)runtime/(mgc|mbitmap|mspanset|mheap|mcentral|mcache|mwbbuf|mfinal|mprof)|internal/runtime/gc/`), CatGC},
	{regexp.MustCompile(`(^|/)runtime/(malloc|msize|mpagealloc|memclr|memmove)`), CatAlloc},
	{regexp.MustCompile(`(^|/)(net|internal/poll|syscall|internal/runtime/syscall)/|(^|/)runtime/sys_linux`), CatNet},
	{regexp.MustCompile(`(^|/)(runtime|internal/runtime)/`), CatRuntime},
}

// Category names where the instructions of a source file go.
func Category(file string) string {
	for _, r := range categoryRules {
		if r.pattern.MatchString(file) {
			return r.cat
		}
	}
	return CatOther
}

// Breakdown sums a dump's instructions by Category of the source file
// they come from: each function's own instructions (inlined code counts
// for its own file), not those of the functions it calls.
func Breakdown(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums, err := parseDump(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sums, nil
}

// dumpReader follows a callgrind dump's file context: fl= names the
// function's file, fi= and fe= the file of inlined code; names are
// compressed as "(id) name" the first time and "(id)" after.
type dumpReader struct {
	files    map[string]string // compressed id → file name
	file     string            // the file of the function (fl=)
	current  string            // the file cost lines belong to
	skipNext bool              // the line after calls= is the call's inclusive cost
	sums     map[string]uint64
}

func parseDump(r io.Reader) (map[string]uint64, error) {
	d := &dumpReader{files: map[string]string{}, sums: map[string]uint64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if err := d.line(sc.Text()); err != nil {
			return nil, err
		}
	}
	return d.sums, sc.Err()
}

func (d *dumpReader) line(line string) error {
	if line == "" {
		return nil
	}
	key, value, isSpec := strings.Cut(line, "=")
	switch {
	case isCost(line[0]):
		return d.cost(line)
	case !isSpec:
		return nil // headers such as "events: Ir"
	case key == "fl":
		d.file = d.name(value)
		d.current = d.file
	case key == "fi" || key == "fe":
		d.current = d.name(value)
	case key == "fn":
		d.current = d.file
	case key == "cfi" || key == "cfl":
		d.name(value) // may define a compressed name used later
	case key == "calls":
		d.skipNext = true
	}
	return nil
}

func isCost(c byte) bool { return c == '+' || c == '-' || c == '*' || (c >= '0' && c <= '9') }

// cost adds a cost line ("position Ir") to the current file's category.
func (d *dumpReader) cost(line string) error {
	if d.skipNext {
		d.skipNext = false
		return nil
	}
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return nil // a position without events costs nothing
	}
	n, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return fmt.Errorf("cost line %q: %w", line, err)
	}
	d.sums[Category(d.current)] += n
	return nil
}

// name resolves "(id) name" and "(id)" file references.
func (d *dumpReader) name(ref string) string {
	if !strings.HasPrefix(ref, "(") {
		return ref
	}
	id, rest, _ := strings.Cut(ref, ")")
	if name := strings.TrimSpace(rest); name != "" {
		d.files[id] = name
		return name
	}
	return d.files[id]
}
