package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/bench/report"
)

// The outage: every forwarder caches names of TTL staleTTL, then the link
// drops every query for cfg.outage. Once the names have expired, each
// forwarder is asked one of them, and one name never asked, every
// probeEvery, as a client that gives up after clientTimeout would.
const (
	probeEvery    = 5 * time.Second
	clientTimeout = 5 * time.Second // glibc's resolver's first try
	// staleLimit is RFC 8767's client response timer (section 5).
	staleLimit = 1800 * time.Millisecond
)

// staleName is the i-th name of TTL staleTTL.
func staleName(i int) string { return fmt.Sprintf("s%05d.%s", i, externalZone) }

func outageMethod(cfg config) string {
	return fmt.Sprintf("Each server first caches names of TTL %s; then the link drops every query for %s (the upstream silent, as a dead host is). "+
		"From %s after the names were cached, every %s, each server is asked one of its expired names and one name never asked, by a client that waits %s, all servers at once.",
		staleTTL, cfg.outage, staleTTL+time.Second, probeEvery, clientTimeout)
}

// outagePart runs the outage for every forwarder serving; names never
// asked are taken from the external zone's name next on.
func (b *bench) outagePart(ctx context.Context, rows []*forwardRow, insts map[string]*instance, next int) {
	probes := int(b.cfg.outage / probeEvery)
	if next+len(rows)*probes > b.cfg.externalNames || len(rows)*probes > staleNames {
		b.logf("outage not run: too few names left")
		return
	}
	for i, row := range rows {
		if inst := insts[row.Server]; inst != nil {
			for j := range probes {
				if p := ask(ctx, inst.addr, staleName(i*probes+j)); p.Answers == 0 {
					row.Notes = append(row.Notes, fmt.Sprintf("outage: %s not cached before (%s)", staleName(i*probes+j), dns.RcodeToString[p.Rcode]))
				}
			}
		}
	}
	cached := time.Now()
	b.link.cut.Store(true)
	defer b.link.cut.Store(false)
	end := time.Now().Add(b.cfg.outage)
	b.logf("outage: the link to the upstream is cut for %s", b.cfg.outage)
	var wg sync.WaitGroup
	for i, row := range rows {
		inst := insts[row.Server]
		if inst == nil {
			continue
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			row.Outage.Stale = probeEach(ctx, inst.addr, cached.Add(staleTTL+time.Second), end, func(j int) string { return staleName(i*probes + j) })
		}()
		go func() {
			defer wg.Done()
			row.Outage.New = probeEach(ctx, inst.addr, cached.Add(staleTTL+time.Second), end, func(j int) string { return externalName(next + i*probes + j) })
		}()
	}
	wg.Wait()
	for _, row := range rows {
		b.logf("%-18s outage: expired names %v, new names %v", row.Server, row.Outage.Stale, row.Outage.New)
	}
}

// probeEach asks name(j) at from + j·probeEvery while that is before end,
// and returns what each query got.
func probeEach(ctx context.Context, addr string, from, end time.Time, name func(int) string) []report.Probe {
	var out []report.Probe
	for j := 0; ; j++ {
		at := from.Add(time.Duration(j) * probeEvery)
		if !at.Before(end) || ctx.Err() != nil {
			return out
		}
		time.Sleep(time.Until(at)) // the probes' schedule, not a wait for a condition
		out = append(out, ask(ctx, addr, name(j)))
	}
}

// ask sends one A query with RD set, as a stub resolver does, and waits
// clientTimeout for the answer.
func ask(ctx context.Context, addr, name string) report.Probe {
	c := &dns.Client{Timeout: clientTimeout}
	start := time.Now()
	resp, _, err := c.ExchangeContext(ctx, new(dns.Msg).SetQuestion(name, dns.TypeA), addr)
	took := time.Since(start)
	if err != nil {
		return report.Probe{Latency: took, Rcode: report.NoAnswer}
	}
	return report.Probe{Latency: took, Rcode: resp.Rcode, Answers: len(resp.Answer)}
}
