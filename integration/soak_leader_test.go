package integration

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/integration/soakcheck"
)

const (
	// leaderSampleEvery is how often each kube2sky's kube2sky_leader gauge
	// is read; a read gets as long to answer.
	leaderSampleEvery = 100 * time.Millisecond
	// leaderlessBound: no stretch without a kube2sky leader may last
	// longer than a fault is held plus a lease and a takeover.
	leaderlessBound = faultHoldMax + leaseTTL + takeoverSlack
)

// leaderSamples records, for each kube2sky replica, whether it led, from
// watchLeaders until its context ends.
type leaderSamples struct {
	mu      sync.Mutex
	samples [][]soakcheck.LeaderSample // one list per replica; guarded by mu
	done    sync.WaitGroup
}

// watchLeaders samples every replica's leadership until ctx ends.
func watchLeaders(ctx context.Context, replicas []*harness.Kube2Sky) *leaderSamples {
	l := &leaderSamples{samples: make([][]soakcheck.LeaderSample, len(replicas))}
	client := &http.Client{Timeout: leaderSampleEvery}
	for i, k := range replicas {
		l.done.Go(func() {
			every(ctx, leaderSampleEvery, func(int) {
				at := time.Now()
				leading := scrapeLeading(ctx, client, k.HTTPAddr)
				l.mu.Lock()
				l.samples[i] = append(l.samples[i], soakcheck.LeaderSample{At: at, Leading: leading})
				l.mu.Unlock()
			})
		})
	}
	return l
}

// scrapeLeading reports whether the kube2sky at addr answers that it leads.
func scrapeLeading(ctx context.Context, client *http.Client, addr string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return false
	}
	m, err := harness.ParseMetrics(string(body))
	return err == nil && m["kube2sky_leader"] == 1
}

// checkLeaderless prints the longest stretch without a leader and fails
// the run past leaderlessBound; call it after the sampling's context ended.
func (r *soakRun) checkLeaderless(t *testing.T) {
	r.leaders.done.Wait()
	longest, began := soakcheck.LongestLeaderless(r.leaders.samples)
	phase := ""
	for name := range maps.Keys(soakcheck.MaxByPhase(r.phases, []time.Time{began}, []time.Duration{longest})) {
		phase = name
	}
	fmt.Printf("soak: longest time without a kube2sky leader: %v (bound %v), from %s, in %q\n",
		longest.Round(time.Millisecond), leaderlessBound, began.Format("15:04:05.000"), phase)
	if longest > leaderlessBound {
		t.Errorf("no kube2sky led for %v from %s (in %q), more than %v", longest, began.Format("15:04:05.000"), phase, leaderlessBound)
	}
}
