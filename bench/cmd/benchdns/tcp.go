package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/bench/report"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

// The TCP comparison: the servers a node-local cache forwards to over
// TCP, each loaded by dnsperf's tcpClients clients on connections they
// keep, tcpOutstanding queries in flight in all.
const (
	tcpClients     = 10
	tcpOutstanding = 100
)

// tcpServers are the servers compared over TCP, in the table's order,
// whatever --servers says.
var tcpServers = []string{report.SkyDNS, report.CoreDNSCacheAll, report.Dnsmasq}

// tcpRun is one timed run of a round of the TCP part, over mode's
// transport (see measure).
type tcpRun struct {
	row  *report.Row
	mode string
}

// tcpRounds starts the TCP servers --servers names, skydns serving DNS
// over TLS too, then runs cfg.rounds interleaved rounds: one TCP run per
// server, one DNS over TLS run of skydns and one UDP run of skydns (the
// reference of its CPU per TCP query), rotating the order each round.
// Then it counts instructions per query over TCP.
func (b *bench) tcpRounds(ctx context.Context, res *results) {
	for _, name := range tcpServers {
		res.tcp = append(res.tcp, report.Row{Server: name})
	}
	res.tcpDoT, res.tcpUDP = report.Row{Server: report.SkyDNS}, report.Row{Server: report.SkyDNS}
	dot, err := b.dotOptions()
	if err != nil {
		res.tcpDoT.Problem = err.Error()
	}
	insts := b.startAll(ctx, res.tcp, map[string]startOptions{report.SkyDNS: dot})
	b.warmUp(ctx, insts)
	defer func() {
		for _, inst := range insts {
			inst.stop()
		}
	}()
	var runs []tcpRun
	for i := range res.tcp {
		runs = append(runs, tcpRun{row: &res.tcp[i], mode: "tcp"})
	}
	if sky := insts[report.SkyDNS]; sky != nil {
		if sky.tlsAddr != "" {
			runs = append(runs, tcpRun{row: &res.tcpDoT, mode: "dot"})
		}
		runs = append(runs, tcpRun{row: &res.tcpUDP, mode: "udp"})
	}
	for r := range b.cfg.rounds {
		for i := range runs {
			run := runs[(i+r)%len(runs)]
			inst := insts[run.row.Server]
			if inst == nil || ctx.Err() != nil {
				continue
			}
			s, err := b.measure(ctx, inst, run.mode)
			if err != nil {
				run.row.Problem = err.Error()
				continue
			}
			run.row.Samples = append(run.row.Samples, s)
			b.logf("round %d %-22s %s %8.0f QPS, %s CPU/query, p99 %s, lost %d", r+1, run.row.Server, run.mode, s.QPS, s.CPUPerQuery, s.P99, s.Lost)
		}
	}
}

// dotOptions start skydns serving DNS over TLS too, on a free port of
// 127.0.0.1, with a certificate for 127.0.0.1 of a throwaway CA written
// into the work directory (dnsperf does not check it).
func (b *bench) dotOptions() (startOptions, error) {
	port, err := freePort()
	if err != nil {
		return startOptions{}, err
	}
	dir := filepath.Join(b.work, "dot")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return startOptions{}, err
	}
	ca, err := kubeproc.NewCA(dir, 24*time.Hour)
	if err != nil {
		return startOptions{}, fmt.Errorf("DNS over TLS certificate: %w", err)
	}
	tmpl := kubeproc.CertTemplate("skydns", 24*time.Hour)
	tmpl.ExtKeyUsage, tmpl.IPAddresses = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []net.IP{net.IPv4(127, 0, 0, 1)}
	cert, key, err := ca.Issue("skydns-dot", tmpl)
	if err != nil {
		return startOptions{}, fmt.Errorf("DNS over TLS certificate: %w", err)
	}
	return startOptions{extra: dotArgs(addr(port), cert, key), tlsAddr: addr(port)}, nil
}

// dotArgs are skydns's flags serving DNS over TLS on tlsAddr with the
// certificate and key files.
func dotArgs(tlsAddr, cert, key string) []string {
	return []string{"--tls-addr", tlsAddr, "--tls-cert", cert, "--tls-key", key}
}

// warmUp sends every server the query file once over TCP, so that the
// caches hold their answers before the timed runs.
func (b *bench) warmUp(ctx context.Context, insts map[string]*instance) {
	for _, name := range tcpServers {
		inst := insts[name]
		if inst == nil || ctx.Err() != nil {
			continue
		}
		run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: b.queries, MaxRuns: 1, Mode: "tcp",
			Clients: tcpClients, Outstanding: tcpOutstanding, CPU: b.cfg.loadCPU})
		if err != nil {
			b.logf("warming %s up: %v", name, err)
			continue
		}
		b.logf("warmed %s up: %d queries answered, %d lost, %.0f QPS", name, run.Completed, run.Lost, run.QPS)
	}
}

// tcpCallgrindPass counts instructions per TCP query of skydns, and per
// UDP query unless the UDP pass counted it. Not the others: CoreDNS's
// cache costs what its hit rate makes it, and dnsmasq closes a
// connection after 100 queries, so that the queries in flight then are
// lost and the run waits for each one's timeout.
func (b *bench) tcpCallgrindPass(ctx context.Context, res *results) {
	queries, err := b.firstLines(b.cfg.cgQueries)
	if err != nil {
		b.logf("callgrind: %v", err)
		return
	}
	if i := slices.IndexFunc(res.tcp, func(r report.Row) bool { return r.Server == report.SkyDNS }); i >= 0 && ctx.Err() == nil {
		row := &res.tcp[i]
		b.countInto(row, "", func() (float64, error) { return b.countServer(ctx, serverNamed(report.SkyDNS), queries, row, true) })
	}
	if udp := report.Find(res.rows, report.SkyDNS); udp.Instr > 0 {
		res.tcpUDP.Instr, res.tcpUDP.FirstInstr = udp.Instr, udp.FirstInstr
	} else if ctx.Err() == nil && len(res.tcpUDP.Samples) > 0 {
		b.countInto(&res.tcpUDP, "", func() (float64, error) {
			return b.countServer(ctx, serverNamed(report.SkyDNS), queries, &res.tcpUDP, false)
		})
	}
}

func proto(tcp bool) string {
	if tcp {
		return "tcp"
	}
	return "udp"
}
