package callgrind

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/bench/fixed"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/gotool"
	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/poll"
)

func TestParseTotalReadsTheLastLine(t *testing.T) {
	dump := "version: 1\nevents: Ir\nsummary: 555027108\n\nfn=(1) main\n3 10\ntotals: 555027108\n"
	n, err := parseTotal(strings.NewReader(dump))
	if err != nil || n != 555027108 {
		t.Fatalf("parseTotal = %d, %v", n, err)
	}
}

func TestParseTotalRejectsAnIncompleteDump(t *testing.T) {
	for _, dump := range []string{"version: 1\nsummary: 12\nfn=(1) main\n", "totals:\n", "totals: many\n"} {
		if _, err := parseTotal(strings.NewReader(dump)); err == nil {
			t.Errorf("parseTotal(%q): want an error", dump)
		}
	}
}

func TestCommandRunsArgvUnderCallgrind(t *testing.T) {
	got := strings.Join(Command("/tmp/cg.out", "prog", "-x"), " ")
	if got != "valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out prog -x" {
		t.Fatalf("command %q", got)
	}
}

func TestCountsTheInstructionsOfAWindow(t *testing.T) {
	if _, err := exec.LookPath("callgrind_control"); err != nil {
		t.Skip("valgrind is not installed (apt-get install valgrind)")
	}
	dir := t.TempDir()
	out, addrFile, logFile := filepath.Join(dir, "cg.out"), filepath.Join(dir, "addr"), filepath.Join(dir, "log")
	helper := buildHelper(t, dir)
	argv := Command(out, helper)
	p, err := kubeproc.Start(kubeproc.Spec{Name: "fixed", Path: argv[0], Args: argv[1:], Log: logFile,
		Env: append([]string{helperEnv + "=" + addrFile}, Env...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	addr := waitForAddr(t, ctx, addrFile, p, logFile)
	if err := Zero(ctx, p.PID()); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if err := query(addr); err != nil {
			t.Fatal(err)
		}
	}
	busy, err := Dump(ctx, p.PID(), out, 1)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := Dump(ctx, p.PID(), out, 2)
	if err != nil {
		t.Fatal(err)
	}
	if busy < idle+200*5000 {
		t.Fatalf("200 queries took %d instructions, an idle window %d: want at least 5000 more per query", busy, idle)
	}
}

// helperEnv makes the test binary serve fixed answers on a free port and
// write its address to the file named by the variable.
const helperEnv = "CALLGRIND_TEST_FIXED_ADDR_FILE"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		h, _ := fixed.NewResponder(netip.MustParseAddr("10.0.0.1"), 30)
		s, err := fixed.Start("127.0.0.1:0", h)
		if err != nil || os.WriteFile(path+".tmp", []byte(s.Addr()), 0o644) != nil || os.Rename(path+".tmp", path) != nil {
			os.Exit(1)
		}
		select {}
	}
	os.Exit(m.Run())
}

// query asks addr for an A record and checks it is the fixed answer.
func query(addr string) error {
	resp, err := dnstest.Send("udp", addr, new(dns.Msg).SetQuestion("a.example.", dns.TypeA))
	if err == nil && (len(resp.Answer) != 1 || !strings.HasSuffix(resp.Answer[0].String(), "10.0.0.1")) {
		err = fmt.Errorf("not the fixed answer: %v", resp.Answer)
	}
	return err
}

// buildHelper builds this package's test binary without the race detector:
// ThreadSanitizer's shadow memory does not start reliably under valgrind.
func buildHelper(t *testing.T, dir string) string {
	t.Helper()
	helper := filepath.Join(dir, "helper.test")
	build := gotool.Command("test", "-c", "-o", helper, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the helper: %v\n%s", err, b)
	}
	return helper
}

// waitForAddr polls until the helper has written its address, and fails
// with the helper's log if it exits first or ctx ends.
func waitForAddr(t *testing.T, ctx context.Context, path string, p *kubeproc.Process, logFile string) string {
	t.Helper()
	var addr []byte
	err := poll.Every(ctx, time.Minute, 20*time.Millisecond, func(context.Context) (err error) {
		if addr, err = os.ReadFile(path); err == nil {
			return nil
		}
		select {
		case <-p.Done():
			return poll.Permanent(errors.New("the server under callgrind exited before it served"))
		default:
			return err
		}
	})
	if err != nil {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("%v:\n%s", err, log)
	}
	return string(addr)
}

func TestControlFailsForAProcessNotUnderCallgrind(t *testing.T) {
	if _, err := exec.LookPath("callgrind_control"); err != nil {
		t.Skip("valgrind is not installed")
	}
	if err := Zero(t.Context(), os.Getpid()); err == nil {
		t.Fatal("want an error for the test process itself")
	}
}

func TestCategoryPutsFilesWhereTheirCostBelongs(t *testing.T) {
	cases := map[string]string{
		"./github.com/kubesky/kubesky/skydns/snapshot/lookup.go": CatSkyDNS,
		"./github.com/kubesky/kubesky/skydns/snapshot/table.go":  CatTree,
		"/root/go/pkg/mod/github.com/miekg/dns@v1.1.72/msg.go":   CatMiekg,
		"./runtime/symtab.go":                CatStack,
		"/usr/local/go/src/runtime/stack.go": CatStack,
		"./runtime/mgcmark_greenteagc.go":    CatGC,
		"./internal/runtime/gc/scan/scan.go": CatGC,
		"./runtime/malloc.go":                CatAlloc,
		"./internal/poll/fd_unix.go":         CatNet,
		"./runtime/sys_linux_amd64.s":        CatNet,
		"./runtime/proc.go":                  CatRuntime,
		"./strings/strings.go":               CatOther,
		"???":                                CatOther,
	}
	for file, want := range cases {
		if got := Category(file); got != want {
			t.Errorf("Category(%s) = %q, want %q", file, got, want)
		}
	}
}

func TestParseDumpSumsOwnCostByTheFileItComesFrom(t *testing.T) {
	dump := `# callgrind format
events: Ir
summary: 1000

ob=(1) /bin/skydns
fl=(1) ./runtime/symtab.go
fn=(1) runtime.step
10 100
+1 50
cfi=(2) ./github.com/kubesky/kubesky/skydns/snapshot/lookup.go
cfn=(2) lookup
calls=1 5
* 400
fi=(3) ./runtime/malloc.go
+2 30

fl=(2)
fn=(2)
5 400
fe=(1)
6 20
`
	sums, err := parseDump(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{CatStack: 170, CatAlloc: 30, CatSkyDNS: 400}
	if len(sums) != len(want) || sums[CatStack] != 170 || sums[CatAlloc] != 30 || sums[CatSkyDNS] != 400 {
		t.Fatalf("sums %v, want %v (the call's inclusive 400 not counted)", sums, want)
	}
}

func TestParseDumpRejectsABadCostLine(t *testing.T) {
	if _, err := parseDump(strings.NewReader("fl=(1) x.go\nfn=(1) f\n3 lots\n")); err == nil {
		t.Fatal("want an error")
	}
}
