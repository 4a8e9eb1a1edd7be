package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/kubesky/kubesky/bench/report"
)

// server is how to run one of the compared DNS servers.
type server struct {
	name string
	// argv returns the command serving DNS on port.
	argv func(b *bench, port, httpPort int) ([]string, error)
	// goRuntime servers need callgrind.Env under callgrind.
	goRuntime bool
	// readsEtcd servers query etcd per request: etcd's CPU is theirs too.
	readsEtcd bool
	// pprof servers serve net/http/pprof and Go metrics on their HTTP port.
	pprof bool
	// tcpOnly servers run in the TCP part only, whatever --servers says.
	tcpOnly bool
	// callgrindArgv, if set, adapts the command to run under callgrind.
	callgrindArgv func(argv []string) []string
	// warmUp servers cache what they answer: the query file is sent once
	// before the timed rounds, which measure them warm.
	warmUp bool
	// dnssecOK servers are sent every query with the DO bit.
	dnssecOK bool
	// processTree servers answer in child processes: their CPU time
	// counts.
	processTree bool
	// noCallgrind, if set, says why instructions are not counted.
	noCallgrind string
	// serveStale says how a forwarder is set to serve expired answers.
	serveStale string
}

var servers = []server{
	{name: report.Floor, argv: floorArgv},
	{name: report.Knot, argv: knotArgv},
	{name: report.NSD, argv: nsdArgv, processTree: true, noCallgrind: "not counted: NSD answers in a child process callgrind_control does not reach"},
	{name: report.SkyDNS, argv: skydnsArgv, goRuntime: true, pprof: true, warmUp: true},
	{name: report.SkyDNSDO, argv: skydnsDOArgv, goRuntime: true, pprof: true, warmUp: true, dnssecOK: true},
	{name: report.CoreDNS, argv: corednsArgv(""), goRuntime: true, readsEtcd: true},
	{name: report.CoreDNSCache, argv: corednsArgv(cache30), goRuntime: true, readsEtcd: true},
	{name: report.CoreDNSCacheAll, argv: corednsArgv(cacheAll), goRuntime: true, readsEtcd: true, tcpOnly: true},
	{name: report.Dnsmasq, argv: dnsmasqArgv, callgrindArgv: dnsmasqCallgrindArgv},
	{name: report.Fixed, argv: fixedArgv, goRuntime: true},
}

// serverNames are the servers --servers may name: those of the UDP
// comparison.
func serverNames() []string {
	var names []string
	for _, s := range servers {
		if !s.tcpOnly {
			names = append(names, s.name)
		}
	}
	return names
}

func serverNamed(name string) server {
	for _, s := range servers {
		if s.name == name {
			return s
		}
	}
	panic("no server " + name) // names are validated with the flags
}

func skydnsArgv(b *bench, port, httpPort int) ([]string, error) {
	return []string{b.cfg.skydns, "--dns-addr", addr(port), "--http-addr", addr(httpPort),
		"--etcd-endpoints", b.etcdURL, "--zone", zone + ".", "--log-level", "warn", "--pprof"}, nil
}

// The caches CoreDNS-etcd is run behind: none, CoreDNS's usual 30 s one,
// and one that holds every answer of the data set (about 30 000) for an
// hour, longer than the bench: its minimum TTL (3600 s) outlasts the
// records' (the etcd plugin's 300 s; its SOA's 30 s for NXDOMAIN and
// NODATA).
const (
	cache30  = "    cache 30\n"
	cacheAll = "    cache 3600 {\n        success 200000 3600 3600\n        denial 200000 3600 3600\n    }\n"
)

func corednsArgv(cache string) func(b *bench, port, httpPort int) ([]string, error) {
	return func(b *bench, port, _ int) ([]string, error) {
		corefile := filepath.Join(b.work, fmt.Sprintf("Corefile.%d", port))
		if err := os.WriteFile(corefile, []byte(corefileText(port, b.etcdURL, cache)), 0o644); err != nil {
			return nil, err
		}
		return []string{filepath.Join(b.cfg.bin, "coredns"), "-conf", corefile, "-quiet"}, nil
	}
}

// corefileText serves the zone from etcd on 127.0.0.1:port, behind the
// cache block cache ("": none).
func corefileText(port int, etcdURL, cache string) string {
	return fmt.Sprintf("%s:%d {\n    bind 127.0.0.1\n    etcd %s {\n        path /skydns\n        endpoint %s\n    }\n%s}\n",
		zone, port, zone, etcdURL, cache)
}

// dnsmasqArgv serves the hosts file. --local makes dnsmasq answer the zone
// itself (NXDOMAIN, NODATA) instead of REFUSED for want of an upstream.
// --keep-in-foreground, not --no-daemon: that one also serves TCP
// connections one at a time in the main process, so that a client keeping
// its connection open starves every other TCP client. A TCP connection is
// served by a child process (CPUTime counts the children it reaped).
func dnsmasqArgv(b *bench, port, _ int) ([]string, error) {
	return append(append([]string{"dnsmasq"}, dnsmasqForeground...), "--no-resolv", "--no-hosts", "--addn-hosts="+b.hosts,
		"--local=/"+zone+"/", "--port="+strconv.Itoa(port), "--listen-address=127.0.0.1", "--bind-interfaces"), nil
}

// dnsmasqForeground are the flags that keep dnsmasq in the foreground
// with a child process per TCP connection.
var dnsmasqForeground = []string{"--keep-in-foreground", "--user=root", "--pid-file="}

// dnsmasqCallgrindArgv runs dnsmasq with --no-daemon under callgrind:
// kept in the foreground otherwise, it does not answer under valgrind,
// and its TCP work would be in child processes callgrind does not count.
// The callgrind pass's one TCP connection is served in the main process.
func dnsmasqCallgrindArgv(argv []string) []string {
	out := []string{argv[0], "--no-daemon"}
	for _, a := range argv[1:] {
		if !slices.Contains(dnsmasqForeground, a) {
			out = append(out, a)
		}
	}
	return out
}

func fixedArgv(b *bench, port, _ int) ([]string, error) {
	return []string{filepath.Join(b.cfg.benchBin, "fixeddns"), "--addr", addr(port)}, nil
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
