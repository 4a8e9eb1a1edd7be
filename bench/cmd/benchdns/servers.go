package main

import (
	"fmt"
	"os"
	"path/filepath"
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
}

var servers = []server{
	{name: report.SkyDNS, argv: skydnsArgv, goRuntime: true, pprof: true},
	{name: report.CoreDNS, argv: corednsArgv(false), goRuntime: true, readsEtcd: true},
	{name: report.CoreDNSCache, argv: corednsArgv(true), goRuntime: true, readsEtcd: true},
	{name: report.Dnsmasq, argv: dnsmasqArgv},
	{name: report.Fixed, argv: fixedArgv, goRuntime: true},
}

func serverNames() []string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.name
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

func corednsArgv(cache bool) func(b *bench, port, httpPort int) ([]string, error) {
	return func(b *bench, port, _ int) ([]string, error) {
		corefile := filepath.Join(b.work, fmt.Sprintf("Corefile.%d", port))
		if err := os.WriteFile(corefile, []byte(corefileText(port, b.etcdURL, cache)), 0o644); err != nil {
			return nil, err
		}
		return []string{filepath.Join(b.cfg.bin, "coredns"), "-conf", corefile, "-quiet"}, nil
	}
}

// corefileText serves the zone from etcd on 127.0.0.1:port, optionally
// behind a 30 s cache.
func corefileText(port int, etcdURL string, cache bool) string {
	extra := ""
	if cache {
		extra = "    cache 30\n"
	}
	return fmt.Sprintf("%s:%d {\n    bind 127.0.0.1\n    etcd %s {\n        path /skydns\n        endpoint %s\n    }\n%s}\n",
		zone, port, zone, etcdURL, extra)
}

// dnsmasqArgv serves the hosts file. --local makes dnsmasq answer the zone
// itself (NXDOMAIN, NODATA) instead of REFUSED for want of an upstream.
func dnsmasqArgv(b *bench, port, _ int) ([]string, error) {
	return []string{"dnsmasq", "--no-daemon", "--no-resolv", "--no-hosts", "--addn-hosts=" + b.hosts,
		"--local=/" + zone + "/", "--port=" + strconv.Itoa(port), "--listen-address=127.0.0.1", "--bind-interfaces"}, nil
}

func fixedArgv(b *bench, port, _ int) ([]string, error) {
	return []string{filepath.Join(b.cfg.benchBin, "fixeddns"), "--addr", addr(port)}, nil
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
