package composetest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The pace of the rolling-restart client: the queries a second it sends,
// how often it polls every replica's /readyz (as a readiness probe feeds
// a Service's endpoints), and each query's one and only timeout: a stub
// resolver's (glibc's default), as on a busy 2-core machine running the
// whole stack a UDP round trip through Docker's port mapping can stall
// for a second. A query sent to a closed port fails at once (ICMP port
// unreachable) whatever the timeout.
const (
	routedQPS        = 200
	readinessPeriod  = time.Second
	routedTimeout    = 5 * time.Second
	maxFailuresShown = 20
)

// replica is one skydns replica as a Service sees it: a DNS address and
// a readiness URL.
type replica struct {
	name, dnsAddr, readyz string
}

// routedClient plays a Service in front of the skydns replicas, the way
// kube-proxy and the endpoints controller do in a cluster: it polls every
// replica's /readyz each readinessPeriod and sends each query, once and
// without retry, to the next replica that was ready at the last poll. A
// query fails when no replica is ready, or when the chosen one does not
// answer it right within routedTimeout. So zero failures across restarts
// shows two things: a stopping replica turns unready (lameduck) before it
// stops answering, and a starting one turns ready only once it answers.
type routedClient struct {
	replicas []replica
	ready    atomic.Pointer[[]replica] // those ready at the last poll
	next     atomic.Uint64
	done     chan struct{}
	wg       sync.WaitGroup

	sent   atomic.Int64
	mu     sync.Mutex
	failed []string
	served map[string]int // answers by replica
}

func startRoutedClient(t *testing.T, replicas ...replica) *routedClient {
	c := &routedClient{replicas: replicas, done: make(chan struct{}), served: map[string]int{}}
	c.pollReadiness()
	c.wg.Go(c.readinessLoop)
	c.wg.Go(c.queryLoop)
	t.Cleanup(c.stop)
	return c
}

func (c *routedClient) readinessLoop() {
	tick := time.NewTicker(readinessPeriod)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
			c.pollReadiness()
		}
	}
}

// pollReadiness publishes the replicas whose /readyz answers 200.
func (c *routedClient) pollReadiness() {
	var ready []replica
	for _, r := range c.replicas {
		if code, _, err := httpGet(context.Background(), r.readyz); err == nil && code == http.StatusOK {
			ready = append(ready, r)
		}
	}
	c.ready.Store(&ready)
}

// queryLoop sends routedQPS queries a second, each in its own goroutine
// so that a slow answer does not delay the next query.
func (c *routedClient) queryLoop() {
	tick := time.NewTicker(time.Second / routedQPS)
	defer tick.Stop()
	var queries sync.WaitGroup
	defer queries.Wait()
	for i := 0; ; i++ {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		e := exampleAnswers[i%len(exampleAnswers)]
		queries.Go(func() { c.ask(e) })
	}
}

func (c *routedClient) ask(e expectation) {
	c.sent.Add(1)
	ready := *c.ready.Load()
	if len(ready) == 0 {
		c.fail(fmt.Errorf("%s %s: no replica ready", e.name, dns.TypeToString[e.qtype]))
		return
	}
	r := ready[c.next.Add(1)%uint64(len(ready))]
	if err := checkWithin(r.dnsAddr, e, routedTimeout); err != nil {
		c.fail(fmt.Errorf("%s: %w", r.name, err))
		return
	}
	c.mu.Lock()
	c.served[r.name]++
	c.mu.Unlock()
}

func (c *routedClient) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = append(c.failed, time.Now().Format("15:04:05.000")+" "+err.Error())
}

// stop ends the queries and waits for those in flight; it is safe to call
// twice.
func (c *routedClient) stop() {
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	c.wg.Wait()
}

// results returns the queries sent, the failures and the answers by
// replica.
func (c *routedClient) results() (int64, []string, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	served := map[string]int{}
	for k, v := range c.served {
		served[k] = v
	}
	return c.sent.Load(), append([]string(nil), c.failed...), served
}

// rollingRestart restarts each service in turn, as `docker compose
// restart` does (SIGTERM, then start), and waits until url of the service
// says ready before the next one.
func rollingRestart(t *testing.T, s *stack, ready map[string]string, services ...string) {
	t.Helper()
	for _, svc := range services {
		start := time.Now()
		s.run("restart", svc)
		waitHTTP(t, ready[svc], http.StatusOK, "ok", startTimeout)
		t.Logf("%s restarted and ready again in %s", svc, time.Since(start).Round(100*time.Millisecond))
	}
}

// handOver stops the kube2sky leader, waits until the other replica leads
// and returns how long that took from the stop, then starts the stopped
// one again and waits until it is ready (a standby now).
func handOver(t *testing.T, s *stack, replicas map[string]string) time.Duration {
	t.Helper()
	leader := findLeader(t, replicas)
	start := time.Now()
	s.stop(leader)
	var took time.Duration
	for name, url := range replicas {
		if name != leader {
			waitHTTP(t, url, http.StatusOK, "leader", time.Minute)
			took = time.Since(start)
			t.Logf("%s stopped; %s led %s after the stop began", leader, name, took.Round(10*time.Millisecond))
		}
	}
	s.run("start", leader)
	waitHTTP(t, replicas[leader], http.StatusOK, "ok: standby", startTimeout)
	return took
}
