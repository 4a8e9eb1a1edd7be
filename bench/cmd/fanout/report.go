package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kubesky/kubesky/bench/gendata"
)

// writeReport writes the markdown tables of every configuration to o.out.
func writeReport(o options, results []result, took time.Duration) error {
	return gendata.WriteFile(o.out, func(w io.Writer) error {
		var b strings.Builder
		header(&b, o, results, took)
		fanOutTable(&b, results)
		usageTable(&b, results)
		feedingTable(&b, o, results)
		joinTable(&b, o, results)
		marginalTable(&b, results)
		recoveryTable(&b, results)
		slowTable(&b, o, results)
		_, err := io.WriteString(w, b.String())
		return err
	})
}

func header(b *strings.Builder, o options, results []result, took time.Duration) {
	keys := 0
	if len(results) > 0 {
		keys = results[0].keys
	}
	host, _ := os.Hostname()
	fmt.Fprintf(b, "# etcd watch fan-out to W skydns readers\n\n")
	fmt.Fprintf(b, "`go run ./bench/cmd/fanout --readers %s --proxies %d --direct=%v --readers-per-client %d --start-rate %d --services %d --endpoints %d --rate %d --churn %s --slow %s --catch-up %s --relist-jitter %s --list-slots %d --tiers %s --watch-batch %s` (`make bench-fan-out` with its FANOUT_ variables), on %s (2 cores, shared), %s in all.\n\n",
		joinInts(o.readers), o.proxies, o.direct, o.perClient, o.startRate, o.services, o.endpoints, o.rate, o.churn, o.slow, o.catchUp, o.jitter, o.listSlots, strings.Join(o.tiers, ","), o.watchBatch, host, took.Round(time.Second))
	fmt.Fprintf(b, "A 3-member etcd cluster (real `etcd` processes on 127.0.0.1, `--watch-progress-notify-interval %s`), "+
		"%d keys: %d Services built by kube2sky's record builder (one in %d headless with %d endpoints, the rest ClusterIP; one named port each). "+
		"Churn: one Txn per change in kube2sky's shape (fenced on the leader key, each key's mod revision compared; "+
		"a headless endpoint moves: 3 deletes and 3 puts). Readers: etcdstore.ListWatcher, all in the bench process, "+
		"%d reader(s) per etcd client (one gRPC connection each), each client on one member (without proxies) or one proxy (with); "+
		"each keeps a map of key hash → mod revision per event and skips parsing values and building answer tables. "+
		"Fan-out is from the moment the Txn is sent to the moment the last reader applied its revision.\n\n",
		o.progressNotify, keys, o.services, headlessN, o.endpoints, o.perClient)
}

func fanOutTable(b *strings.Builder, results []result) {
	section(b, "Fan-out under churn",
		"",
		"readers", "proxies", "clients", "initial sync (readers started at --start-rate)", "list pages from the proxies' caches", "Txns/s", "fan-out p50", "p99", "max", "revisions some reader missed")
	for _, r := range results {
		p := r.churn
		fmt.Fprintf(b, "| %d | %s | %d | %s | %s | %.0f | %s | %s | %s | %d |\n", r.setup.readers, r.setup.proxiesLabel(), r.clients,
			secs(r.sync), r.syncCache, p.rate, ms(percentile(p.lat, 50)), ms(percentile(p.lat, 99)), ms(percentile(p.lat, 100)), p.missed)
	}
	b.WriteString("\n")
}

func usageTable(b *strings.Builder, results []result) {
	section(b, "CPU and memory of each server",
		"CPU: average over the churn (the writes included); RSS: idle (data loaded, no reader) → end of the churn.",
		"readers", "proxies", "server", "CPU (cores)", "RSS idle → loaded (MB)")
	for _, r := range results {
		idle := idleRSS(r)
		for _, u := range r.churn.usage {
			fmt.Fprintf(b, "| %d | %s | %s | %.2f | %s → %s |\n", r.setup.readers, r.setup.proxiesLabel(), u.name, u.cores, mb(idle[u.name]), mb(u.rss))
		}
	}
	b.WriteString("\n")
}

// marginalTable gives the cost of 1,000 more readers: the difference
// between two reader counts of the same proxy setup, so that the writes'
// own cost and the data's memory cancel out.
func marginalTable(b *strings.Builder, results []result) {
	section(b, "Cost of 1,000 more readers",
		"The difference between two runs of the same setup, divided by the readers added (÷1,000): all members together, all proxies together.",
		"proxies", "readers", "members CPU (cores)", "members RSS (MB)", "proxies CPU (cores)", "proxies RSS (MB)")
	for i, hi := range results {
		for _, lo := range results[:i] {
			if lo.setup.proxies != hi.setup.proxies || lo.setup.tier != hi.setup.tier || lo.setup.readers >= hi.setup.readers {
				continue
			}
			per := float64(hi.setup.readers-lo.setup.readers) / 1000
			mc, mr := classDelta(lo, hi, "m")
			pc, pr := classDelta(lo, hi, "proxy")
			fmt.Fprintf(b, "| %s | %d → %d | %.3f | %.0f | %.3f | %.0f |\n", hi.setup.proxiesLabel(), lo.setup.readers, hi.setup.readers,
				mc/per, mr/1e6/per, pc/per, pr/1e6/per)
		}
	}
	b.WriteString("\n")
}

// classDelta is hi's minus lo's churn CPU and RSS growth over idle, summed
// over the servers whose name starts with class.
func classDelta(lo, hi result, class string) (cores, rss float64) {
	sum := func(r result) (float64, float64) {
		idle := idleRSS(r)
		var c, m float64
		for _, u := range r.churn.usage {
			if strings.HasPrefix(u.name, class) {
				c, m = c+u.cores, m+float64(u.rss-idle[u.name])
			}
		}
		return c, m
	}
	lc, lm := sum(lo)
	hc, hm := sum(hi)
	return hc - lc, hm - lm
}

func idleRSS(r result) map[string]int64 {
	idle := map[string]int64{}
	for _, u := range r.idle {
		idle[u.name] = u.rss
	}
	return idle
}

func recoveryTable(b *strings.Builder, results []result) {
	section(b, "Disruptions: time until every reader is current again",
		"Compaction: every reader's watch is cut off, 2 s of churn is committed and compacted, and the watches are let back: each reader must list again (after its RelistJitter). Peak: the most CPU one etcd member used over a 0.5 s sample. Reader errors: ListWatcher states carrying an error (a refused or failed request), and in brackets those that are a request's deadline passing rather than etcd refusing it. Gave up: readers not current after the catch-up limit. List pages from the proxies' caches: of the list pages (serializable range requests) the proxies got, those they answered from their caches.",
		"readers", "proxies", "event", "all current after", "peak member CPU (cores)", "peak member RSS (MB)", "re-lists", "list pages from the proxies' caches", "reader errors (timed out)", "gave up")
	for _, r := range results {
		for _, rec := range r.recovered {
			peak, rss := 0.0, int64(0)
			for _, u := range rec.usage {
				if strings.HasPrefix(u.name, "m") {
					peak, rss = max(peak, u.peak), max(rss, u.peakRSS)
				}
			}
			fmt.Fprintf(b, "| %d | %s | %s | %s | %.2f | %s | %d | %s | %d (%d) | %d |\n", r.setup.readers, r.setup.proxiesLabel(), rec.event,
				secs(rec.took), peak, mb(rss), rec.counted.lists, rec.counted.cache, rec.counted.errors, rec.counted.timeouts, rec.of-rec.current)
		}
	}
	b.WriteString("\n")
}

func slowTable(b *strings.Builder, o options, results []result) {
	section(b, "One slow reader",
		"Reader 0's apply stops while the churn goes on; the others' fan-out is timed meanwhile, then reader 0 is let go.",
		"readers", "proxies", "stall", "others' fan-out p99 (no stall → stall)", "max", "slow reader current after release")
	for _, r := range results {
		back := secs(r.slowBack)
		if !r.slowOK {
			back = "not within " + back
		}
		fmt.Fprintf(b, "| %d | %s | %d s | %s → %s | %s | %s |\n", r.setup.readers, r.setup.proxiesLabel(), int(o.slow.Seconds()),
			ms(percentile(r.churn.lat, 99)), ms(percentile(r.slow.lat, 99)), ms(percentile(r.slow.lat, 100)), back)
	}
	b.WriteString("\n")
}

// section writes a table's heading, its explanation (if any) and its
// header row.
func section(b *strings.Builder, title, intro string, columns ...string) {
	fmt.Fprintf(b, "## %s\n\n", title)
	if intro != "" {
		fmt.Fprintf(b, "%s\n\n", intro)
	}
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
}

// String is "hits of pages", or "–" when no page reached a proxy.
func (c listCache) String() string {
	if c.hits+c.misses == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f of %.0f", c.hits, c.hits+c.misses)
}

// proxiesLabel is the proxies' count and tier, as the tables print it.
func (s setup) proxiesLabel() string {
	if s.proxies == 0 {
		return "0"
	}
	return fmt.Sprintf("%d %s", s.proxies, s.tier)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
func mb(n int64) string           { return fmt.Sprintf("%.0f", float64(n)/1e6) }

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}
