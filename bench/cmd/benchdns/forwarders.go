package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// The forwarding caches of the forward part: every one forwards all names
// to the same upstream (b.upstream), with room for the warm set. Each
// writes its configuration into a directory of its own under b.work.
// Every one that can serves expired answers (RFC 8767) while the upstream
// is away, as serveStale says; NodeLocal DNSCache's Corefile does not.
var forwarders = []server{
	{name: "skydns", argv: skydnsForwardArgv, goRuntime: true, pprof: true, serveStale: "`--serve-stale 1h`"},
	{name: "unbound", argv: unboundArgv, serveStale: "`serve-expired`, client timeout 1.8 s"},
	{name: "dnsmasq", argv: dnsmasqForwardArgv, serveStale: "`--use-stale-cache`"},
	{name: "coredns", argv: corednsForwardArgv(corednsForwardCache), serveStale: "`serve_stale 1h`"},
	{name: "coredns-nodelocal", argv: corednsForwardArgv(corednsNodeLocal), serveStale: "none (node-cache's Corefile)"},
	{name: "knot-resolver", argv: kresdArgv, serveStale: "`serve_stale` module"},
	{name: "pdns-recursor", argv: pdnsRecursorArgv, serveStale: "`serve-stale-extensions=120`"},
}

func forwarderNames() []string {
	names := make([]string, len(forwarders))
	for i, s := range forwarders {
		names[i] = s.name
	}
	return names
}

func forwarderNamed(name string) server {
	for _, s := range forwarders {
		if s.name == name {
			return s
		}
	}
	panic("no forwarder " + name) // names are validated with the flags
}

// forwardCacheSize is the cache entries (or their equivalent) each
// forwarder is given: twice the warm set.
const forwardCacheSize = 2 * forwardWarmNames

// configDir makes the configuration directory of server name on port.
func configDir(b *bench, name string, port int) (string, error) {
	dir := filepath.Join(b.work, fmt.Sprintf("%s.%d", name, port))
	return dir, os.MkdirAll(dir, 0o755)
}

// writeConfig writes text into dir/file and returns its path.
func writeConfig(dir, file, text string) (string, error) {
	path := filepath.Join(dir, file)
	return path, os.WriteFile(path, []byte(text), 0o644)
}

func skydnsForwardArgv(b *bench, port, httpPort int) ([]string, error) {
	return []string{b.cfg.skydns, "--dns-addr", addr(port), "--http-addr", addr(httpPort),
		"--etcd-endpoints", b.etcdURL, "--zone", zone + ".", "--log-level", "warn", "--pprof",
		"--upstream", b.upstream, "--cache-size", strconv.Itoa(forwardCacheSize), "--serve-stale", "1h"}, nil
}

// unboundArgv runs Unbound in the foreground, one thread, forwarding
// everything to the upstream, without DNSSEC validation (the external
// zone is unsigned and has no chain from the root).
func unboundArgv(b *bench, port, _ int) ([]string, error) {
	dir, err := configDir(b, "unbound", port)
	if err != nil {
		return nil, err
	}
	conf, err := writeConfig(dir, "unbound.conf", fmt.Sprintf(`server:
    interface: 127.0.0.1@%d
    num-threads: 1
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "%s"
    pidfile: ""
    use-syslog: no
    logfile: ""
    verbosity: 0
    access-control: 127.0.0.0/8 allow
    do-not-query-localhost: no
    module-config: "iterator"
    qname-minimisation: no
    msg-cache-size: 256m
    rrset-cache-size: 256m
    key-cache-size: 1m
    serve-expired: yes
    serve-expired-ttl: 3600
    serve-expired-client-timeout: 1800
remote-control:
    control-enable: no
forward-zone:
    name: "."
    forward-addr: %s
`, port, dir, atAddr(b.upstream)))
	return []string{"unbound", "-d", "-c", conf}, err
}

// dnsmasqForwardArgv runs dnsmasq as a forwarding cache.
func dnsmasqForwardArgv(b *bench, port, _ int) ([]string, error) {
	return append(append([]string{"dnsmasq"}, dnsmasqForeground...), "--no-resolv", "--no-hosts",
		"--server="+hashAddr(b.upstream), "--cache-size="+strconv.Itoa(forwardCacheSize), "--use-stale-cache",
		"--port="+strconv.Itoa(port), "--listen-address=127.0.0.1", "--bind-interfaces"), nil
}

// CoreDNS's server blocks: forward and cache with room for the warm set,
// and NodeLocal DNSCache's block for names outside the cluster
// (node-cache's Corefile: errors, cache 30, reload, loop, forward).
const (
	corednsForwardCache = "    forward . %[2]s\n    cache 3600 {\n        success %[3]d\n        denial %[3]d\n        serve_stale 1h\n    }\n"
	corednsNodeLocal    = "    errors\n    cache 30\n    reload\n    loop\n    forward . %[2]s\n"
)

func corednsForwardArgv(block string) func(b *bench, port, httpPort int) ([]string, error) {
	return func(b *bench, port, _ int) ([]string, error) {
		dir, err := configDir(b, "coredns", port)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf(".:%[1]d {\n    bind 127.0.0.1\n"+block+"}\n", port, b.upstream, forwardCacheSize)
		conf, err := writeConfig(dir, "Corefile", text)
		return []string{filepath.Join(b.cfg.bin, "coredns"), "-conf", conf, "-quiet"}, err
	}
}

// kresdArgv runs one Knot Resolver process forwarding everything, without
// a trust anchor (no validation: the external zone is unsigned).
func kresdArgv(b *bench, port, _ int) ([]string, error) {
	dir, err := configDir(b, "kresd", port)
	if err != nil {
		return nil, err
	}
	conf, err := writeConfig(dir, "kresd.conf", fmt.Sprintf(`net.listen('127.0.0.1', %d, { kind = 'dns' })
trust_anchors.remove('.')
modules.load('serve_stale < cache')
cache.open(256 * MB, 'lmdb://%s/cache')
policy.add(policy.all(policy.FORWARD('%s')))
`, port, dir, atAddr(b.upstream)))
	return []string{"kresd", "-n", "-c", conf, dir}, err
}

// pdnsRecursorArgv runs the PowerDNS Recursor in the foreground, one
// thread, forwarding everything; dont-query is emptied, or it would never
// ask an upstream on loopback; no security poll, which would ask the
// upstream too.
func pdnsRecursorArgv(b *bench, port, _ int) ([]string, error) {
	dir, err := configDir(b, "pdns-recursor", port)
	if err != nil {
		return nil, err
	}
	return []string{"pdns_recursor", "--config-dir=" + dir, "--socket-dir=" + dir, "--daemon=no", "--disable-syslog",
		"--local-address=127.0.0.1", "--local-port=" + strconv.Itoa(port), "--threads=1", "--pdns-distributes-queries=no",
		"--forward-zones-recurse=.=" + b.upstream, "--dont-query=", "--dnssec=off", "--allow-from=127.0.0.0/8", "--security-poll-suffix=",
		"--max-cache-entries=" + strconv.Itoa(4*forwardCacheSize), "--max-packetcache-entries=" + strconv.Itoa(4*forwardCacheSize), "--serve-stale-extensions=120"}, nil
}

// atAddr writes host:port as host@port (Unbound, Knot Resolver).
func atAddr(hostPort string) string { return replacePort(hostPort, "@") }

// hashAddr writes host:port as host#port (dnsmasq).
func hashAddr(hostPort string) string { return replacePort(hostPort, "#") }

func replacePort(hostPort, sep string) string {
	for i := len(hostPort) - 1; i >= 0; i-- {
		if hostPort[i] == ':' {
			return hostPort[:i] + sep + hostPort[i+1:]
		}
	}
	return hostPort
}
