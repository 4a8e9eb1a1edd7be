package integration

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/integration/soakcheck"
)

// The soak's knobs and bounds (docs/soak.md states them).
const (
	// soakEnv must be set for TestSoak to run; `make soak` sets it.
	soakEnv = "KUBESKY_SOAK"
	// defaultSoakDuration is how long faults and changes go on when
	// SOAK_DURATION is unset.
	defaultSoakDuration = 10 * time.Minute
	// soakPoolSize is how many Services the churn changes.
	soakPoolSize = 150
	// changesPerSecond is the churn's rate.
	changesPerSecond = 20
	// staleBound: no answer may be one superseded longer ago than this.
	staleBound = 15 * time.Second
	// convergeBound: after the last fault and change, etcd and every
	// skydns must hold exactly what the API objects make within this.
	convergeBound = 60 * time.Second
	// faultHoldMin and faultHoldMax bound how long a fault lasts;
	// faultGapMin and faultGapMax the quiet time between two faults.
	faultHoldMin, faultHoldMax = time.Second, 5 * time.Second
	faultGapMin, faultGapMax   = time.Second, 3 * time.Second
)

// soakRun is the system under the soak and what it records.
type soakRun struct {
	api       *harness.APIServer
	cluster   *harness.EtcdCluster
	kube2sky  []*harness.Kube2Sky
	skydns    []*harness.SkyDNS
	history   *historyRecorder
	churn     *soakChurn
	answers   *soakAnswers
	leaders   *leaderSamples
	faultRNG  *rand.Rand
	faults    map[string]int
	phases    []soakcheck.Phase // when each fault began
	changing  sync.WaitGroup    // changes until acknowledged
	verifying sync.WaitGroup    // changes acknowledged until served
}

// TestSoak runs the whole system under steady changes and lookups while a
// seeded schedule injects faults one at a time, then checks convergence,
// staleness, lookups and skydns's watch history. It runs only when
// KUBESKY_SOAK is set (make soak); SOAK_DURATION and SOAK_SEED set its
// length and replay a schedule.
func TestSoak(t *testing.T) {
	duration, seed := soakSettings(t)
	fmt.Printf("soak: seed %d, duration %v (replay with SOAK_SEED=%d)\n", seed, duration, seed)
	t.Logf("seed %d", seed)
	r := startSoak(t, seed)
	ctx, stopTraffic := context.WithCancel(t.Context())
	defer stopTraffic()
	var traffic sync.WaitGroup
	traffic.Go(func() { r.answers.resolve(ctx, rand.New(rand.NewPCG(seed, 2)), r.skydns, r.churn.pool) })
	traffic.Go(func() { r.changeSteadily(ctx) })
	leaderCtx, stopLeaders := context.WithCancel(t.Context())
	defer stopLeaders()
	r.leaders = watchLeaders(leaderCtx, r.kube2sky)

	began := time.Now()
	for i, f := range schedule(r.faultRNG, 1000) {
		if time.Since(began) >= duration {
			break
		}
		r.inject(t, i, f)
	}
	stopTraffic()
	traffic.Wait()
	r.changing.Wait()
	quiet := time.Now()
	convergence := r.awaitConvergence(t)
	fmt.Printf("soak: ran %v of faults and changes, then converged %v after the last (bound %v)\n",
		quiet.Sub(began).Round(time.Second), convergence.Round(time.Millisecond), convergeBound)
	stopLeaders()
	r.verifying.Wait()
	r.check(t)
}

// soakSettings reads SOAK_DURATION and SOAK_SEED, skipping the test
// unless KUBESKY_SOAK is set.
func soakSettings(t *testing.T) (time.Duration, uint64) {
	if os.Getenv(soakEnv) == "" {
		t.Skipf("the soak runs for minutes; set %s=1 (make soak) to run it", soakEnv)
	}
	duration := defaultSoakDuration
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("SOAK_DURATION=%q: want a positive duration such as 2m (%v)", v, err)
		}
		duration = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SOAK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: want the decimal seed a run printed: %v", v, err)
		}
		seed = s
	}
	return duration, seed
}

// startSoak starts the system: a kube-apiserver on an etcd of its own,
// the DNS etcd as a 3-member cluster with auth on, two kube2sky electing
// a leader as the user kube2sky (read and write /skydns/), two skydns as
// the user skydns (read it), and the history recorder (root); then it
// creates the Services.
func startSoak(t *testing.T, seed uint64) *soakRun {
	harness.RequireBinaries(t, "etcd", "kube-apiserver", "kube2sky", "skydns")
	r := &soakRun{faultRNG: rand.New(rand.NewPCG(seed, 1)), faults: map[string]int{}, answers: &soakAnswers{}}
	r.api = harness.StartAPIServer(t, harness.StartEtcd(t).Endpoint)
	r.cluster = harness.StartEtcdCluster(t, 3, fmt.Sprintf("--quota-backend-bytes=%d", quotaBytes))
	passwords := r.cluster.EnableAuth("/skydns/", harness.EtcdUser{Name: "kube2sky", Perm: clientv3.PermissionType(clientv3.PermReadWrite)},
		harness.EtcdUser{Name: "skydns", Perm: clientv3.PermissionType(clientv3.PermRead)})
	r.history = recordHistory(t.Context(), r.cluster.Client(), "/skydns/")
	endpoints := strings.Join(r.cluster.Endpoints(), ",")
	for range 2 {
		r.kube2sky = append(r.kube2sky, harness.StartKube2Sky(t, r.api.Kubeconfig, endpoints,
			"--leader-elect-lease-duration="+leaseTTL.String(), "--etcd-username=kube2sky", "--etcd-password="+passwords["kube2sky"]))
		r.skydns = append(r.skydns, harness.StartSkyDNS(t, endpoints, "--etcd-username=skydns", "--etcd-password="+passwords["skydns"],
			"--etcd-probe-interval=200ms", "--log-level=debug", "--log-format=json"))
	}
	createNamespace(t, r.api.Client, soakNamespace)
	r.churn = newSoakChurn(r.api.Client, rand.New(rand.NewPCG(seed, 3)), soakPoolSize, time.Now())
	r.burst(soakPoolSize)
	return r
}

// inject runs fault number i: inject, hold, heal, and wait until every
// part has recovered, then a quiet gap.
func (r *soakRun) inject(t *testing.T, i int, f soakFault) {
	hold := randomBetween(r.faultRNG, faultHoldMin, faultHoldMax)
	gap := randomBetween(r.faultRNG, faultGapMin, faultGapMax)
	start := time.Now()
	r.phases = append(r.phases, soakcheck.Phase{Name: f.kind, Begin: start})
	heal := f.inject(t, r)
	time.Sleep(hold) // the fault's duration, drawn from the seed
	heal()
	harness.Eventually(t, recoverWithin, func() error { return r.recovered(t.Context()) })
	r.faults[f.kind]++
	t.Logf("fault %d: %s, held %v, recovered %v after it began", i, f.kind, hold.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	time.Sleep(gap) // the quiet time between faults, drawn from the seed
}

func randomBetween(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// changeSteadily starts a change every 1/changesPerSecond until ctx ends.
func (r *soakRun) changeSteadily(ctx context.Context) {
	every(ctx, time.Second/changesPerSecond, func(int) { r.changing.Go(r.changeOne) })
}

// every calls do with 0, 1, 2 ... once per interval until ctx ends.
func every(ctx context.Context, interval time.Duration, do func(n int)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			do(n)
		}
	}
}

// burst makes n changes at once and returns when the API server
// acknowledged them (their verification goes on).
func (r *soakRun) burst(n int) {
	var acks sync.WaitGroup
	for range n {
		acks.Go(r.changeOne)
	}
	acks.Wait()
}

// changeOne changes an idle Service, if any, and verifies it aside. A
// change once begun is carried to its end (or retried until
// writeRetryFor) even when the traffic stops.
func (r *soakRun) changeOne() {
	service, kind, ok := r.churn.pick()
	if !ok {
		return
	}
	v, err := r.churn.change(context.Background(), service, kind)
	if err != nil {
		return
	}
	r.verifying.Go(func() {
		defer r.churn.done(service)
		r.answers.verify(context.Background(), r.skydns, soakName(service), v)
	})
}

// awaitConvergence waits until etcd holds exactly the records the API
// objects make and every skydns answers them at etcd's last revision of
// the prefix, and returns how long that took.
func (r *soakRun) awaitConvergence(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	_, final := r.churn.versions()
	harness.Eventually(t, convergeBound, func() error { return r.converged(t.Context(), final) })
	return time.Since(start)
}

// check judges what was recorded and prints the report.
func (r *soakRun) check(t *testing.T) {
	timeline, _ := r.churn.versions()
	a := r.answers
	stale, maxAge := soakcheck.StaleAnswers(timeline, a.answers, staleBound)
	kinds := slices.Sorted(maps.Keys(r.faults))
	total := 0
	for _, k := range kinds {
		fmt.Printf("soak: fault %-40s %d\n", k, r.faults[k])
		total += r.faults[k]
	}
	fmt.Printf("soak: %d faults; %d changes acknowledged (%d ticks found every Service busy); %d lookups, %d retried, %d failed\n",
		total, r.churn.acked, r.churn.skipped, a.lookups, a.retried, len(a.failures))
	maxDelay, p99Delay := delaySummary(a.delays)
	fmt.Printf("soak: served after acknowledgement: max %v, p99 %v over %d (change, skydns) pairs; oldest superseded answer served %v (bound %v) of %d answers\n",
		maxDelay, p99Delay, len(a.delays),
		maxAge.Round(time.Millisecond), staleBound, len(a.answers))
	byPhase := soakcheck.MaxByPhase(r.phases, a.acks, a.delays)
	for _, phase := range slices.Sorted(maps.Keys(byPhase)) {
		fmt.Printf("soak: served after acknowledgement, max of changes acknowledged from %q to the next fault: %v\n",
			phase, byPhase[phase].Round(time.Millisecond))
	}
	reportProblems(t, "lookups failed", a.failures)
	reportProblems(t, "changes never acknowledged", r.churn.failed)
	reportProblems(t, "changes never served", a.unserved)
	reportProblems(t, "stale answers", stale)
	r.checkWatchHistory(t)
	r.checkLeaderless(t)
	if len(kinds) < len(soakFaults) {
		t.Logf("only %d of the %d fault kinds fit in the run", len(kinds), len(soakFaults))
	}
}

// checkWatchHistory checks every skydns run's applied updates against
// etcd's history of the prefix.
func (r *soakRun) checkWatchHistory(t *testing.T) {
	history, err := r.history.history()
	if err != nil {
		t.Errorf("etcd's history of the prefix: %v", err)
		return
	}
	updates, lists := 0, 0
	for _, s := range r.skydns {
		data, err := os.ReadFile(s.Process.LogPath())
		if err != nil {
			t.Fatal(err)
		}
		runs, err := soakcheck.ParseAppliedLog(data, harness.StartHeader)
		if err != nil {
			t.Fatalf("%s: %v", s.DNSAddr, err)
		}
		for i, run := range runs {
			reportProblems(t, fmt.Sprintf("%s run %d: watch guarantees", s.DNSAddr, i+1), soakcheck.CheckRun(run, history))
			updates += len(run)
			for _, u := range run {
				if u.Full {
					lists++
				}
			}
		}
	}
	fmt.Printf("soak: skydns applied %d updates (%d of them full lists) against %d revisions of /skydns/ in etcd: strictly increasing, no gap, no duplicate checked\n",
		updates, lists, history.Len())
}

func reportProblems(t *testing.T, what string, problems []string) {
	t.Helper()
	if len(problems) == 0 {
		return
	}
	t.Errorf("%d %s; the first: %q", len(problems), what, problems[:min(10, len(problems))])
}

// delaySummary returns the largest and the 99th percentile of ds, or
// zeros when there are none.
func delaySummary(ds []time.Duration) (maxDelay, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return percentile(sorted, 100), percentile(sorted, 99)
}
