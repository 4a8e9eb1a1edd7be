package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// nodeLocalCacheCorefile is NodeLocal DNSCache's Corefile (its
// nodelocaldns.yaml, as cluster/clustertest's bench deploys it) with every
// address on 127.0.0.1: the link-local bind is 127.0.0.1, port 53 is %[1]s,
// the health and prometheus ports are free ones (%[4]s, %[5]s), the
// kube-dns Service is the stand-in skydns at %[2]s, and the node's
// resolvers (forward . /etc/resolv.conf) are the stub upstream at %[3]s.
const nodeLocalCacheCorefile = `cluster.local:%[1]s in-addr.arpa:%[1]s ip6.arpa:%[1]s {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    reload
    loop
    bind 127.0.0.1
    forward . %[2]s {
        force_tcp
    }
    prometheus 127.0.0.1:%[5]s
    health 127.0.0.1:%[4]s
}
.:%[1]s {
    errors
    cache 30
    reload
    loop
    bind 127.0.0.1
    forward . %[3]s
    prometheus 127.0.0.1:%[5]s
}
`

// cacheMeasured is what was measured of CoreDNS as NodeLocal DNSCache.
type cacheMeasured struct {
	measured
	upstreamQueries int64 // queries the stub upstream received
}

// measureNodeLocalCache runs an ordinary skydns reading etcdURL as the
// kube-dns stand-in, a stub upstream, and CoreDNS with NodeLocal DNSCache's
// Corefile in front of both; once CoreDNS answers the last name it asks
// every name once through CoreDNS, as measureSkydns asks skydns, measures
// CoreDNS, and stops the three.
func measureNodeLocalCache(o options, etcdURL string, names []string, dir string) (cacheMeasured, error) {
	var m cacheMeasured
	standInDNS := freeAddr()
	standIn, err := startProcess(o.skydns, []string{"--etcd-endpoints=" + etcdURL, "--zone=cluster.local",
		"--dns-addr=" + standInDNS, "--http-addr=" + freeAddr()}, nil)
	if err != nil {
		return m, err
	}
	defer standIn.stop()
	if err := waitAnswer(standInDNS, names[len(names)-1], 5*time.Minute); err != nil {
		return m, err
	}
	upstream, queries, err := startStubUpstream()
	if err != nil {
		return m, err
	}
	defer upstream.close()

	dnsAddr, healthAddr, metricsAddr := freeAddr(), freeAddr(), freeAddr()
	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
	corefile := filepath.Join(dir, "Corefile")
	text := fmt.Sprintf(nodeLocalCacheCorefile, port(dnsAddr), standInDNS, upstream.addr, port(healthAddr), port(metricsAddr))
	if err := os.WriteFile(corefile, []byte(text), 0o644); err != nil {
		return m, err
	}
	cache, err := startProcess(o.coredns, []string{"-conf", corefile}, nil)
	if err != nil {
		return m, err
	}
	defer cache.stop()
	m.measured, err = askAndMeasure(cache, dnsAddr, metricsAddr, names)
	m.upstreamQueries = queries.Load()
	return m, err
}

// stubUpstream stands for the node's resolvers: it answers every query
// NXDOMAIN over UDP and TCP on 127.0.0.1, and counts them.
type stubUpstream struct {
	addr     string
	udp, tcp *dns.Server
}

func startStubUpstream() (*stubUpstream, *atomic.Int64, error) {
	addr := freeAddr()
	queries := new(atomic.Int64)
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		queries.Add(1)
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeNameError)
		_ = w.WriteMsg(m)
	})
	s := &stubUpstream{addr: addr}
	var err error
	if s.udp, err = listenAndServe(&dns.Server{Addr: addr, Net: "udp", Handler: handler}); err != nil {
		return nil, nil, err
	}
	if s.tcp, err = listenAndServe(&dns.Server{Addr: addr, Net: "tcp", Handler: handler}); err != nil {
		_ = s.udp.Shutdown()
		return nil, nil, err
	}
	return s, queries, nil
}

// listenAndServe starts srv and returns once it listens.
func listenAndServe(srv *dns.Server) (*dns.Server, error) {
	started := make(chan struct{})
	failed := make(chan error, 1)
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { failed <- srv.ListenAndServe() }()
	select {
	case <-started:
		return srv, nil
	case err := <-failed:
		return nil, fmt.Errorf("stub upstream on %s/%s: %w", srv.Addr, srv.Net, err)
	}
}

func (s *stubUpstream) close() { _ = s.udp.Shutdown(); _ = s.tcp.Shutdown() }

// reportSideBySide prints node-local skydns's and NodeLocal DNSCache's
// figures of this run next to each other.
func reportSideBySide(out io.Writer, o options, sky measured, cache cacheMeasured) error {
	info, err := os.Stat(o.coredns)
	if err != nil {
		return err
	}
	mib := func(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
	fmt.Fprintf(out, "\nSide by side, %d Services × %d endpoints, every Service name asked once over UDP of each: node-local skydns (flags %q) and %s (%s) with NodeLocal DNSCache's Corefile in front of a stand-in skydns; CoreDNS's caches then held %.0f answers (%s), the stub upstream had got %d queries\n\n",
		o.services, o.endpoints, o.extra, o.coredns, mib(float64(info.Size())), cacheEntries(cache.gm), cacheKinds(cache.gm), cache.upstreamQueries)
	fmt.Fprintln(out, "| | node-local skydns | NodeLocal DNSCache | skydns / NodeLocal |")
	fmt.Fprintln(out, "|---|---|---|---|")
	bytesRow := func(name string, of func(measured) float64) {
		a, b := of(sky), of(cache.measured)
		fmt.Fprintf(out, "| %s | %s | %s | %.2f |\n", name, mib(a), mib(b), a/b)
	}
	bytesRow("**resident (VmRSS)**", func(m measured) float64 { return float64(m.status["VmRSS"]) })
	bytesRow("peak resident (VmHWM)", func(m measured) float64 { return float64(m.status["VmHWM"]) })
	bytesRow("anonymous (heap, stacks, runtime)", func(m measured) float64 { return float64(m.smaps["Anonymous"]) })
	bytesRow("file-backed (binary pages)", func(m measured) float64 { return float64(m.smaps["Rss"] - m.smaps["Anonymous"]) })
	bytesRow("Go heap live", func(m measured) float64 { return m.gm["go_memstats_heap_alloc_bytes"] })
	bytesRow("Go sys (all the runtime obtained)", func(m measured) float64 { return m.gm["go_memstats_sys_bytes"] })
	durations := func(name string, a, b time.Duration) {
		fmt.Fprintf(out, "| %s | %s | %s | %.2f |\n", name, a.Round(10*time.Millisecond), b.Round(10*time.Millisecond), a.Seconds()/b.Seconds())
	}
	durations("first answer of the last name after start", sky.ready, cache.ready)
	durations("asking every name once", sky.asking, cache.asking)
	return nil
}

// cacheEntries sums CoreDNS's coredns_cache_entries gauges.
func cacheEntries(gm map[string]float64) float64 {
	var n float64
	for name, v := range gm {
		if strings.HasPrefix(name, "coredns_cache_entries{") {
			n += v
		}
	}
	return n
}

// cacheKinds sums CoreDNS's coredns_cache_entries gauges by their type
// label ("denial 1, success 200").
func cacheKinds(gm map[string]float64) string {
	byType := map[string]float64{}
	for name, v := range gm {
		if labels, ok := strings.CutPrefix(name, "coredns_cache_entries{"); ok {
			_, kind, _ := strings.Cut(labels, `type="`)
			kind, _, _ = strings.Cut(kind, `"`)
			byType[kind] += v
		}
	}
	var kinds []string
	for kind, n := range byType {
		kinds = append(kinds, fmt.Sprintf("%s %.0f", kind, n))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}
