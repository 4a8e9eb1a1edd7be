package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/debughttp"
)

// watchResponses sums, over the relay processes, the watch responses
// they sent readers (kubesky_relay_watch_responses_total); grpc-proxy and
// the unbatched relay do not count them (0).
func (c *cluster) watchResponses() float64 {
	var n float64
	for _, p := range c.proxies {
		m, err := harness.ScrapeMetrics(p.metrics)
		if err != nil {
			continue
		}
		for series, v := range m {
			if strings.HasPrefix(series, "kubesky_relay_watch_responses_total") {
				n += v
			}
		}
	}
	return n
}

// profile saves each relay process's CPU profile over the next d in dir,
// named after the run; wait returns once they are written.
func (c *cluster) profile(dir, run string, d time.Duration) (wait func() error) {
	var wg sync.WaitGroup
	errs := make([]error, len(c.proxies))
	for i, p := range c.proxies {
		if p.path == "" { // an etcd grpc-proxy
			continue
		}
		url := strings.TrimSuffix(p.metrics, "/metrics") + fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds()))
		file := filepath.Join(dir, fmt.Sprintf("%s-%s.pprof", run, p.name))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fetchProfile(url, file)
		}()
	}
	return func() error {
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// fleetNodes is the cluster size the feeding table extrapolates to.
const fleetNodes = 5000

// feedingTable is the proxies' CPU per reader per change: what feeding
// one node costs the tier for each Service change.
func feedingTable(b *strings.Builder, o options, results []result) {
	section(b, "Feeding tier: CPU per node per change",
		fmt.Sprintf("The proxies' CPU alone (from /proc, all proxies together) over the churn, ÷ (readers × Txns). "+
			"Responses: the watch responses each reader got a second, as the batched relay counts them (kubesky_relay_watch_responses_total); "+
			"grpc-proxy and the unbatched relay send one per revision. "+
			"Model for %d nodes at 100 changes/s: unbatched, each revision to each reader costs the same at any rate "+
			"(µs per node per change × nodes × 100/s); batched, each reader gets one response per window (%s) once changes come faster than that, "+
			"each costing the µs per response measured (nodes × responses a second × µs per response; per change: ÷ 100). "+
			"A fuller response costs more bytes than the ones measured here: at 100 changes/s one carries about 10 changes.", fleetNodes, o.watchBatch),
		"readers", "proxies", "Txns/s", "proxies' CPU (cores)", "µs per node per change", "responses per reader a second", "µs per response", fmt.Sprintf("model: %d nodes, 100 changes/s (cores)", fleetNodes), "model: µs per node per change at 100/s")
	for _, r := range results {
		if r.setup.proxies == 0 {
			continue
		}
		var cores float64
		for _, u := range r.churn.usage {
			if strings.HasPrefix(u.name, "proxy") {
				cores += u.cores
			}
		}
		w, rate := float64(r.setup.readers), r.churn.rate
		perChange := cores * r.churn.seconds * 1e6 / (w * float64(r.churn.txns))
		perSecond := r.churn.responses / w / r.churn.seconds
		batched := r.setup.tier == tierRelayBatched
		if !batched {
			perSecond = float64(r.churn.txns) / r.churn.seconds
		}
		perResponse := cores * 1e6 / (w * perSecond)
		fleet, at100 := perChange*fleetNodes*100/1e6, perChange
		if batched {
			responses := min(100, float64(time.Second)/float64(o.watchBatch))
			fleet, at100 = fleetNodes*responses*perResponse/1e6, responses*perResponse/100
		}
		fmt.Fprintf(b, "| %d | %s | %.0f | %.3f | %.2f | %.1f | %.1f | %.2f | %.2f |\n", r.setup.readers, r.setup.proxiesLabel(), rate, cores,
			perChange, perSecond, perResponse, fleet, at100)
	}
	b.WriteString("\n")
}

// joinTable is the initial sync seen from the proxies: readers starting
// together (a scale-up with --start-rate at its most) each list the zone
// and watch it; every one is serving once it is current.
func joinTable(b *strings.Builder, o options, results []result) {
	section(b, "Readers joining: the proxies over the initial sync",
		fmt.Sprintf("Readers started at %d a second (--start-rate), at most %d listing at once in this process (--list-slots, 0: no bound); "+
			"all current: every reader has listed and applied etcd's revision. Peak: the most one proxy used over a 0.5 s sample.", o.startRate, o.listSlots),
		"readers", "proxies", "all current after", "proxies' CPU (cores, average)", "peak CPU of one proxy", "peak RSS of one proxy (MB)")
	for _, r := range results {
		if r.setup.proxies == 0 {
			continue
		}
		var cores, peak float64
		var rss int64
		for _, u := range r.syncUsage {
			if strings.HasPrefix(u.name, "proxy") {
				cores, peak, rss = cores+u.cores, max(peak, u.peak), max(rss, u.peakRSS)
			}
		}
		fmt.Fprintf(b, "| %d | %s | %s | %.2f | %.2f | %s |\n", r.setup.readers, r.setup.proxiesLabel(), secs(r.sync), cores, peak, mb(rss))
	}
	b.WriteString("\n")
}

// fetchProfile saves a relay's profile at url into file.
func fetchProfile(url, file string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return debughttp.Fetch(ctx, url, file)
}
