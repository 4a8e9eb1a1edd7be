package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestParseStatCountsFieldsAfterTheCommandName(t *testing.T) {
	line := "4242 (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 7 0 100 1000 200\n"
	ticks, err := parseStat(line)
	if err != nil || ticks != 281 {
		t.Fatalf("parseStat = %d, %v; want 281", ticks, err)
	}
	withChildren := "4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 31 40 9 20 0 7 0 100 1000 200\n"
	if ticks, err := parseStat(withChildren); err != nil || ticks != 330 {
		t.Fatalf("parseStat with children = %d, %v; want 330", ticks, err)
	}
	for _, bad := range []string{"no parens at all", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 u s 0 0", "1 (x) S 1 2 3 4 5 6 7 8 9 10 1 2"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q): want an error", bad)
		}
	}
}

func TestParseStatusReadsResidentAndPeak(t *testing.T) {
	text := "Name:\tx\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\nThreads:\t3\n"
	m, err := parseStatus(strings.NewReader(text))
	if err != nil || m.RSS != 1<<20 || m.Peak != 2<<20 {
		t.Fatalf("parseStatus = %+v, %v", m, err)
	}
	if _, err := parseStatus(strings.NewReader("Name:\tkthreadd\n")); err == nil {
		t.Fatal("a status without VmRSS: want an error")
	}
}

func TestAPinnedProcessIsMeasuredAndStopped(t *testing.T) {
	log := filepath.Join(t.TempDir(), "sh.log")
	argv := Pin(0, []string{"sh", "-c", "echo started; while :; do :; done"})
	p, err := kubeproc.Start(kubeproc.Spec{Name: "sh", Path: argv[0], Args: argv[1:], Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	polltest.True(t, "CPU time to grow", func() bool { d, err := CPUTime(p.PID()); return err == nil && d > 0 })
	status, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/status")
	if err != nil || !strings.Contains(string(status), "Cpus_allowed_list:\t0\n") {
		t.Fatalf("not pinned to CPU 0: %v", err)
	}
	if m, err := ReadMemory(p.PID()); err != nil || m.RSS <= 0 || m.Peak < m.RSS {
		t.Fatalf("memory %+v, %v", m, err)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if out, _ := os.ReadFile(log); string(out) != "started\n" {
		t.Fatalf("log %q", out)
	}
}

func TestPinLeavesACommandFreeForANegativeCPU(t *testing.T) {
	if got := Pin(-1, []string{"sh", "-c", "true"}); strings.Join(got, " ") != "sh -c true" {
		t.Fatalf("Pin(-1) = %q", got)
	}
}

func TestTraceMemoryPlacesThePeak(t *testing.T) {
	tr := TraceMemory(os.Getpid(), time.Millisecond)
	polltest.True(t, "a sample", func() bool {
		rss, _ := tr.PeakBetween(time.Time{}, time.Now().Add(time.Hour))
		return rss > 0
	})
	tr.Stop()
	mem, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	rss, at := tr.PeakBetween(time.Time{}, time.Now())
	if rss <= 0 || rss > mem.Peak || at.IsZero() {
		t.Errorf("peak %d at %v, want a sample in (0, VmHWM %d]", rss, at, mem.Peak)
	}
	if rss, _ := tr.PeakBetween(time.Now(), time.Now().Add(time.Hour)); rss != 0 {
		t.Errorf("peak after Stop = %d, want 0: no sample", rss)
	}
}

func TestTreeCPUTimeCountsABusyChild(t *testing.T) {
	log := filepath.Join(t.TempDir(), "sh.log")
	// The parent waits on a child that spins: the parent's own time stays
	// near zero, the tree's grows.
	p, err := kubeproc.Start(kubeproc.Spec{Name: "sh", Path: "sh", Args: []string{"-c", "sh -c 'while :; do :; done' & wait"}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	polltest.True(t, "the child's CPU time in the tree's", func() bool {
		own, err1 := CPUTime(p.PID())
		tree, err2 := TreeCPUTime(p.PID())
		return err1 == nil && err2 == nil && tree >= own+50*time.Millisecond
	})
	kids, err := children(p.PID())
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v, %v", kids, err)
	}
	for _, kid := range kids {
		syscall.Kill(kid, syscall.SIGKILL)
	}
}
