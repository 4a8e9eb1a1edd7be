package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The reference servers beside skydns: Knot DNS and NSD serving the same
// records from a zone file (gendata.WriteZone), one worker each, and the
// kernel floor (bench/floor/floordns.c). Each writes its configuration
// into the bench's scratch directory.

// knotArgv runs knotd with one UDP worker, one TCP worker and one
// background worker, its zone loaded from b.zone and never written back.
func knotArgv(b *bench, port, _ int) ([]string, error) {
	conf, err := writeConf(b, "knot", port, knotConf)
	return []string{"knotd", "--config", conf}, err
}

// writeConf writes the configuration text(dir, zone file, port) of the
// server name on port into a directory of its own, and returns its path.
func writeConf(b *bench, name string, port int, text func(dir, zoneFile string, port int) string) (string, error) {
	dir, err := configDir(b, name, port)
	if err != nil {
		return "", err
	}
	return writeConfig(dir, name+".conf", text(dir, b.zone, port))
}

func knotConf(dir, zoneFile string, port int) string {
	return fmt.Sprintf(`server:
    rundir: "%[1]s"
    listen: 127.0.0.1@%[3]d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "%[1]s"
log:
  - target: stderr
    any: warning
zone:
  - domain: %[4]s
    file: "%[2]s"
    journal-content: none
    zonefile-sync: -1
    zonefile-load: whole
    semantic-checks: off
`, dir, zoneFile, port, zone)
}

// nsdArgv runs nsd in the foreground with one server process, no
// database file, no remote control and no response rate limiting (on by
// default: 200 answers a second to one client network). NSD forks its server and xfrd
// processes: their CPU time is counted (server.processTree).
func nsdArgv(b *bench, port, _ int) ([]string, error) {
	conf, err := writeConf(b, "nsd", port, nsdConf)
	return []string{"nsd", "-d", "-c", conf}, err
}

func nsdConf(dir, zoneFile string, port int) string {
	return fmt.Sprintf(`server:
    server-count: 1
    ip-address: 127.0.0.1
    port: %[3]d
    do-ip6: no
    username: ""
    chroot: ""
    database: ""
    zonesdir: "%[1]s"
    pidfile: "%[1]s/nsd.pid"
    xfrdfile: "%[1]s/xfrd.state"
    zonelistfile: "%[1]s/zone.list"
    xfrdir: "%[1]s"
    verbosity: 0
    rrl-ratelimit: 0
    rrl-whitelist-ratelimit: 0
remote-control:
    control-enable: no
zone:
    name: %[4]s
    zonefile: "%[2]s"
`, dir, zoneFile, port, zone)
}

// floorArgv runs the kernel-floor server dns.sh built with gcc.
func floorArgv(b *bench, port, _ int) ([]string, error) {
	return []string{filepath.Join(b.cfg.benchBin, "floordns"), "127.0.0.1", fmt.Sprint(port)}, nil
}

// skydnsDOArgv is skydns signing its zone with a CSK made for the bench:
// the DO-bit mix is sent to it.
func skydnsDOArgv(b *bench, port, httpPort int) ([]string, error) {
	key, err := b.dnssecKey()
	if err != nil {
		return nil, err
	}
	argv, err := skydnsArgv(b, port, httpPort)
	return append(argv, "--dnssec-key", key), err
}

// dnssecKey makes the bench's key with `skydns dnssec keygen`, once, and
// returns its .key file.
func (b *bench) dnssecKey() (string, error) {
	if b.key != "" {
		return b.key, nil
	}
	dir := filepath.Join(b.work, "keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	out, err := exec.Command(b.cfg.skydns, "dnssec", "keygen", "--zone", zone, "--ksk", "--dir", dir).Output()
	if err != nil {
		return "", fmt.Errorf("skydns dnssec keygen: %w", err)
	}
	b.key = strings.TrimSpace(string(out)) + ".key"
	return b.key, nil
}
