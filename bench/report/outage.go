package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Outage is what one forwarder's clients saw while its upstream answered
// nothing: names it had cached, now expired, and names never asked.
type Outage struct {
	// ServeStale says how serve-stale is configured.
	ServeStale string
	// Stale are the probes of expired names, first one first.
	Stale []Probe
	// New are the probes of names never asked, first one first.
	New []Probe
}

// Probe is one query of the outage and what came back.
type Probe struct {
	Latency time.Duration
	// Rcode is the answer's; NoAnswer when none came before the client
	// gave up.
	Rcode   int
	Answers int
}

// NoAnswer is a probe's Rcode when the client timed out.
const NoAnswer = -1

// OutageTable is the outage comparison, one line per forwarder.
func OutageTable(rows []ForwardRow) string {
	var b strings.Builder
	b.WriteString("| server | serve-stale | first expired name | later expired names: answered | slowest | first new name | later new names | slowest |\n" +
		"|---|---|---:|---:|---:|---:|---|---:|\n")
	for _, r := range rows {
		o := r.Outage
		if len(o.Stale) == 0 && len(o.New) == 0 {
			fmt.Fprintf(&b, "| %s | %s | — | — | — | — | — | — |\n", r.Server, valueOr(o.ServeStale, "—"))
			continue
		}
		stale, news := rest(o.Stale), rest(o.New)
		fmt.Fprintf(&b, "| %s | %s | %s | %d of %d | %s | %s | %s | %s |\n", r.Server, o.ServeStale,
			probeCell(first(o.Stale)), answered(stale), len(stale), slowest(stale), probeCell(first(o.New)), rcodes(news), slowest(news))
	}
	return b.String()
}

func first(ps []Probe) Probe {
	if len(ps) == 0 {
		return Probe{Rcode: NoAnswer}
	}
	return ps[0]
}

func rest(ps []Probe) []Probe {
	if len(ps) < 2 {
		return nil
	}
	return ps[1:]
}

// probeCell is the latency and what came: "1.80 s NOERROR", "time-out".
func probeCell(p Probe) string {
	if p.Rcode == NoAnswer {
		return "time-out"
	}
	return fmt.Sprintf("%s %s", seconds3(p.Latency), rcodeName(p))
}

func rcodeName(p Probe) string {
	name := dns.RcodeToString[p.Rcode]
	if p.Rcode == dns.RcodeSuccess && p.Answers == 0 {
		name += " (empty)"
	}
	return name
}

func seconds3(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// answered counts the probes answered NOERROR with records.
func answered(ps []Probe) int {
	n := 0
	for _, p := range ps {
		if p.Rcode == dns.RcodeSuccess && p.Answers > 0 {
			n++
		}
	}
	return n
}

// rcodes counts what the probes got: "11 SERVFAIL, 1 time-out".
func rcodes(ps []Probe) string {
	counts := map[string]int{}
	var order []string
	for _, p := range ps {
		name := "time-out"
		if p.Rcode != NoAnswer {
			name = rcodeName(p)
		}
		if counts[name] == 0 {
			order = append(order, name)
		}
		counts[name]++
	}
	parts := make([]string, len(order))
	for i, name := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[name], name)
	}
	return valueOr(strings.Join(parts, ", "), "—")
}

func slowest(ps []Probe) string {
	if len(ps) == 0 {
		return "—"
	}
	var m time.Duration
	for _, p := range ps {
		m = max(m, p.Latency)
	}
	return seconds3(m)
}

// targets judges the outage: the first expired name answered stale
// within limit, every later one answered, and no new name left to a
// client's time-out.
func (o Outage) targets(limit time.Duration) []Target {
	if len(o.Stale) == 0 {
		return []Target{{Goal: "outage: first stale answer within " + limit.String(), Measured: "—", Verdict: "not measured"}}
	}
	f := first(o.Stale)
	timedOut := 0
	for _, p := range o.New {
		if p.Rcode == NoAnswer {
			timedOut++
		}
	}
	stale := rest(o.Stale)
	return []Target{
		judge("outage: first stale answer within "+limit.String(), probeCell(f), 1, f.Rcode == dns.RcodeSuccess && f.Answers > 0 && f.Latency <= limit),
		judge("outage: every later expired name answered", fmt.Sprintf("%d of %d", answered(stale), len(stale)), 1, answered(stale) == len(stale)),
		judge("outage: new names answered, not timed out", rcodes(o.New), 1, timedOut == 0),
	}
}
