package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/polltest"
)

// proc reads a process's memory and open files from /proc.
type proc struct{ pid int }

// procMemory is a process's resident memory now (VmRSS) and at its peak
// (VmHWM), in bytes.
type procMemory struct{ rss, hwm int64 }

func (p proc) memory(t *testing.T) procMemory {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		t.Fatalf("reading the server's memory: %v", err)
	}
	return procMemory{rss: statusBytes(status, "VmRSS:"), hwm: statusBytes(status, "VmHWM:")}
}

// statusBytes is the "<n> kB" value of field in /proc/<pid>/status, in
// bytes.
func statusBytes(status []byte, field string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (p proc) fds(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
	if err != nil {
		t.Fatalf("listing the server's open files: %v", err)
	}
	return len(entries)
}

// procPeaks are the largest values seen by watch.
type procPeaks struct{ rss, fds atomic.Int64 }

// watch samples the process's RSS and open files every 50 ms until ctx
// ends.
func (p proc) watch(ctx context.Context, t *testing.T) *procPeaks {
	peaks := &procPeaks{}
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
			entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
			if err != nil {
				return // gone: the test's checks say so
			}
			peaks.rss.Store(max(peaks.rss.Load(), statusBytes(status, "VmRSS:")))
			peaks.fds.Store(max(peaks.fds.Load(), int64(len(entries))))
		}
	}()
	return peaks
}

// waitFDs polls, for at most 30 s, until the process has at most n open
// files.
func waitFDs(t *testing.T, p proc, n int, what string) {
	t.Helper()
	polltest.Within(t, 30*time.Second, fmt.Sprintf("%s: at most %d open files", what, n), func() error {
		if got := p.fds(t); got > n {
			return fmt.Errorf("the server still has %d open files", got)
		}
		return nil
	})
}

// scrapeSum is the sum of every series of metric on addr's /metrics.
func scrapeSum(t *testing.T, addr, metric string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, metric+" ") || strings.HasPrefix(line, metric+"{") {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			sum += v
		}
	}
	return sum
}

// udpDrops is how many datagrams the kernel dropped at the UDP sockets
// bound to addr's port (a full receive buffer), from /proc/net/udp.
func udpDrops(t *testing.T, addr string) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	table, err := os.ReadFile("/proc/net/udp")
	if err != nil {
		t.Fatalf("reading the UDP sockets: %v", err)
	}
	drops := 0
	for _, line := range strings.Split(string(table), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) < 13 || !strings.HasSuffix(fields[1], fmt.Sprintf(":%04X", p)) {
			continue
		}
		n, _ := strconv.Atoi(fields[12])
		drops += n
	}
	return drops
}

// cpu is the CPU time the process has used, user and system, from
// /proc/<pid>/stat (in clock ticks of 10 ms).
func (p proc) cpu(t *testing.T) time.Duration {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		t.Fatalf("reading the server's CPU time: %v", err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
