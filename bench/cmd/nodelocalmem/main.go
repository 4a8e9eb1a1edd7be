// Command nodelocalmem measures where one node-local skydns's memory goes.
//
// It starts an embedded etcd on 127.0.0.1, writes the records kube2sky
// writes for N headless Services of E ready endpoints each (the zone of
// make bench-node-local), starts the skydns binary given with --skydns on
// 127.0.0.1 reading that etcd, waits until it answers the last name, asks
// every Service name once over UDP (so the fast path holds what a node's
// pods asked), and prints a Markdown table: resident memory from
// /proc/PID/status and smaps_rollup (file-backed = binary pages), the Go
// runtime's figures from /metrics, and the in-use heap by function from
// /debug/pprof/heap (go tool pprof -top).
//
// With --coredns it then measures, in the same run and with the same
// names asked, CoreDNS configured as NodeLocal DNSCache configures it
// (nodelocalcache.go), and prints the two side by side.
//
//	nodelocalmem --skydns bin/skydns --services 10000 --endpoints 5 [--coredns bin/coredns] [-- extra skydns flags]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/embedetcd"
	"github.com/kubesky/kubesky/internal/debughttp"
	"github.com/kubesky/kubesky/internal/exepages"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// options are the command line's settings.
type options struct {
	skydns    string
	services  int
	endpoints int
	goMemLim  string
	coredns   string // CoreDNS binary to run as NodeLocal DNSCache; empty: skydns alone
	extra     []string
}

func main() {
	o, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodelocalmem:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nodelocalmem:", err)
		os.Exit(1)
	}
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("nodelocalmem", flag.ContinueOnError)
	fs.StringVar(&o.skydns, "skydns", "bin/skydns", "the skydns binary to measure")
	fs.IntVar(&o.services, "services", 10000, "headless Services")
	fs.IntVar(&o.endpoints, "endpoints", 5, "ready endpoints per Service")
	fs.StringVar(&o.goMemLim, "gomemlimit", "", "GOMEMLIMIT for skydns (empty: none)")
	fs.StringVar(&o.coredns, "coredns", "", "CoreDNS binary to measure as NodeLocal DNSCache after skydns, asked the same names (empty: skydns alone)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.services < 1 || o.endpoints < 1 || o.endpoints > 250 {
		return o, fmt.Errorf("--services %d --endpoints %d: want at least 1 of each, at most 250 endpoints", o.services, o.endpoints)
	}
	if o.coredns != "" {
		if info, err := os.Stat(o.coredns); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return o, fmt.Errorf("--coredns %s: want an executable CoreDNS binary (make coredns)", o.coredns)
		}
	}
	o.extra = fs.Args()
	return o, nil
}

func run(ctx context.Context, o options, out io.Writer) error {
	dir, err := os.MkdirTemp("", "nodelocalmem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	etcd, err := embedetcd.Start(embedetcd.Config{DataDir: filepath.Join(dir, "etcd"), ClientURL: "http://127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer etcd.Close()
	kvs, names := zone(o.services, o.endpoints)
	if err := load(ctx, etcd.ClientURL(), kvs); err != nil {
		return err
	}
	heapFile := filepath.Join(dir, "heap.pb.gz")
	sky, err := measureSkydns(o, etcd.ClientURL(), names, heapFile)
	if err != nil {
		return err
	}
	if err := report(out, o, sky, heapFile, len(kvs), gendata.RawBytes(kvs)); err != nil {
		return err
	}
	if o.coredns == "" {
		return nil
	}
	cache, err := measureNodeLocalCache(o, etcd.ClientURL(), names, dir)
	if err != nil {
		return err
	}
	return reportSideBySide(out, o, sky, cache)
}

// measureSkydns runs node-local skydns reading etcdURL, waits until it
// answers the last name, asks every name once, measures it, writes its
// heap profile to heapFile and stops it.
func measureSkydns(o options, etcdURL string, names []string, heapFile string) (measured, error) {
	dnsAddr, httpAddr := freeAddr(), freeAddr()
	var env []string
	if o.goMemLim != "" {
		env = []string{"GOMEMLIMIT=" + o.goMemLim}
	}
	p, err := startProcess(o.skydns, append([]string{"--etcd-endpoints=" + etcdURL, "--zone=cluster.local",
		"--dns-addr=" + dnsAddr, "--http-addr=" + httpAddr, "--pprof"}, o.extra...), env)
	if err != nil {
		return measured{}, err
	}
	defer p.stop()
	m, err := askAndMeasure(p, dnsAddr, httpAddr, names)
	if err != nil {
		return m, err
	}
	return m, debughttp.Fetch(context.Background(), "http://"+httpAddr+"/debug/pprof/heap?gc=1", heapFile)
}

// process is a started server binary.
type process struct {
	cmd    *exec.Cmd
	binary string
	start  time.Time
}

// startProcess starts binary with args, and env added to this process's
// environment; its output is discarded.
func startProcess(binary string, args, env []string) (*process, error) {
	cmd := exec.Command(binary, args...)
	cmd.Stderr = io.Discard
	cmd.Env = append(os.Environ(), env...)
	p := &process{cmd: cmd, binary: binary, start: time.Now()}
	return p, cmd.Start()
}

// stop kills the process and waits for it.
func (p *process) stop() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() }

// askAndMeasure waits until the server at dnsAddr answers the last name,
// asks every name once, and measures the process, whose Go gauges are at
// metricsAddr's /metrics.
func askAndMeasure(p *process, dnsAddr, metricsAddr string, names []string) (measured, error) {
	if err := waitAnswer(dnsAddr, names[len(names)-1], 5*time.Minute); err != nil {
		return measured{}, err
	}
	ready := time.Since(p.start)
	asked := time.Now()
	if err := askAll(dnsAddr, names); err != nil {
		return measured{}, err
	}
	m, err := measure(p.cmd.Process.Pid, metricsAddr, p.binary)
	m.ready, m.asking = ready, time.Since(asked)
	return m, err
}

// measured is what /proc and /metrics said of skydns after the names were
// asked, before the heap profile was taken.
type measured struct {
	status, smaps map[string]int64
	exe           map[string]int64 // resident bytes of the binary's mappings, by permissions
	gm            map[string]float64
	ready         time.Duration // from start to the first answer of the last name
	asking        time.Duration // asking every name once
}

func measure(pid int, httpAddr, binary string) (measured, error) {
	var m measured
	var err error
	if m.smaps, err = procFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err != nil {
		return m, err
	}
	if m.status, err = procFields(fmt.Sprintf("/proc/%d/status", pid)); err != nil {
		return m, err
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return m, err
	}
	if m.exe, err = exepages.Resident(pid, abs); err != nil {
		return m, err
	}
	m.gm, err = goMetrics(httpAddr)
	return m, err
}

// zone returns the etcd records of n headless Services of e endpoints each,
// as kube2sky builds them, and the Services' names.
func zone(n, e int) ([]gendata.KV, []string) {
	z := records.NewZone("cluster.local", "/skydns", 30, "kube2sky.cluster.local")
	var kvs []gendata.KV
	names := make([]string, n)
	ports := []records.Port{{Name: "http", Protocol: "TCP", Port: 80}}
	for i := range n {
		name := fmt.Sprintf("big-%d", i)
		svc := records.Service{Namespace: "default", Name: name, Type: records.TypeClusterIP, ClusterIPs: []string{records.ClusterIPNone}, Ports: ports}
		slice := records.EndpointSlice{Namespace: "default", Name: name, Service: name, AddressType: "IPv4", Ports: ports}
		for j := range e {
			slice.Endpoints = append(slice.Endpoints, records.Endpoint{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 100+j, i/250%256, i%250+1)}, Ready: true})
		}
		entries, _ := records.Build(z, svc, []records.EndpointSlice{slice})
		for _, en := range entries {
			kvs = append(kvs, gendata.KV{Key: en.Key, Value: string(en.Record.Encode())})
		}
		names[i] = name + ".default.svc.cluster.local."
	}
	return kvs, names
}

func load(ctx context.Context, endpoint string, kvs []gendata.KV) error {
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = []string{endpoint}
	c, err := opts.New(nil)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = gendata.Load(ctx, c, kvs, 0)
	return err
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago
// for both UDP and TCP.
func freeAddr() string {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		addr := l.Addr().String()
		l.Close()
		if u, err := net.ListenPacket("udp", addr); err == nil {
			u.Close()
			return addr
		}
	}
}

func exchange(server, name string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := dns.Client{Timeout: time.Second}
	r, _, err := c.Exchange(m, server)
	if err != nil {
		return nil, err
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		return nil, fmt.Errorf("%s: %s, %d answers", name, dns.RcodeToString[r.Rcode], len(r.Answer))
	}
	return r, nil
}

func waitAnswer(server, name string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		_, err := exchange(server, name)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer %s within %s: %w", server, name, within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func askAll(server string, names []string) error {
	conn, err := net.Dial("udp", server)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := &dns.Conn{Conn: conn}
	for _, name := range names {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		if err := c.WriteMsg(m); err != nil {
			return err
		}
		if _, err := c.ReadMsg(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// procFields reads "Name: value kB" lines of a /proc file into bytes.
func procFields(file string) (map[string]int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, rest, ok := strings.Cut(s.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if n, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			out[name] = n << 10
		}
	}
	return out, s.Err()
}

// goMetrics reads the go_memstats and go_gc gauges of a process's
// /metrics, and CoreDNS's cache sizes (coredns_cache_entries, by labels).
func goMetrics(httpAddr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "go_memstats_") && !strings.HasPrefix(line, "go_gc_gomemlimit") && !strings.HasPrefix(line, "coredns_cache_entries{") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if v, err := strconv.ParseFloat(value, 64); ok && err == nil {
			out[name] = v
		}
	}
	return out, s.Err()
}

func report(out io.Writer, o options, m measured, heapFile string, keys, rawBytes int) error {
	status, smaps, gm := m.status, m.smaps, m.gm
	mib := func(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
	info, err := os.Stat(o.skydns)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d headless Services × %d endpoints: %d etcd keys, %d bytes of keys and values; skydns %s (%s), flags %q, GOMEMLIMIT %q; answered the last name %s after start\n\n",
		o.services, o.endpoints, keys, rawBytes, o.skydns, mib(float64(info.Size())), o.extra, o.goMemLim, m.ready.Round(10*time.Millisecond))
	fmt.Fprintln(out, "| what | bytes |")
	fmt.Fprintln(out, "|---|---|")
	rows := []struct {
		name  string
		bytes float64
	}{
		{"VmRSS", float64(status["VmRSS"])},
		{"VmHWM (peak resident)", float64(status["VmHWM"])},
		{"smaps_rollup Anonymous (heap, stacks, runtime)", float64(smaps["Anonymous"])},
		{"smaps_rollup file-backed (binary pages)", float64(smaps["Rss"] - smaps["Anonymous"])},
		{"· the binary's code (r-xp)", float64(m.exe["r-xp"])},
		{"· the binary's read-only data (r--p)", float64(m.exe["r--p"])},
		{"· the binary's data (rw-p)", float64(m.exe["rw-p"])},
		{"Go heap in use (go_memstats_heap_inuse_bytes)", gm["go_memstats_heap_inuse_bytes"]},
		{"Go heap live (go_memstats_heap_alloc_bytes)", gm["go_memstats_heap_alloc_bytes"]},
		{"Go heap idle, not returned (heap_idle - heap_released)", gm["go_memstats_heap_idle_bytes"] - gm["go_memstats_heap_released_bytes"]},
		{"Go stacks (go_memstats_stack_inuse_bytes)", gm["go_memstats_stack_inuse_bytes"]},
		{"Go runtime other (mspan, mcache, buckhash, gc, other sys)", gm["go_memstats_mspan_inuse_bytes"] + gm["go_memstats_mcache_inuse_bytes"] + gm["go_memstats_buck_hash_sys_bytes"] + gm["go_memstats_gc_sys_bytes"] + gm["go_memstats_other_sys_bytes"]},
		{"Go sys (all the runtime obtained)", gm["go_memstats_sys_bytes"]},
	}
	for _, r := range rows {
		fmt.Fprintf(out, "| %s | %s |\n", r.name, mib(r.bytes))
	}
	fmt.Fprintf(out, "\nper etcd key: %.0f bytes resident, %.0f bytes of live heap\n\n", float64(status["VmRSS"])/float64(keys), gm["go_memstats_heap_alloc_bytes"]/float64(keys))
	top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", "-sample_index=inuse_space", o.skydns, heapFile).CombinedOutput()
	if err != nil {
		return errors.Join(err, errors.New(string(top)))
	}
	fmt.Fprintf(out, "In-use heap after a GC (go tool pprof -top -sample_index=inuse_space):\n\n```\n%s```\n", top)
	cum, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=40", "-sample_index=inuse_space", o.skydns, heapFile).CombinedOutput()
	if err != nil {
		return errors.Join(err, errors.New(string(cum)))
	}
	fmt.Fprintf(out, "\nThe same, cumulative:\n\n```\n%s```\n", cum)
	return nil
}
