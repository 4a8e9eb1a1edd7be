package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/integration/soakcheck"
)

const (
	// lookupEvery paces the resolving client (100 lookups a second).
	lookupEvery = 10 * time.Millisecond
	// lookupTimeout bounds one attempt of a lookup, as a stub resolver's
	// timeout would; a lookup tries the other skydns once after it.
	lookupTimeout = 800 * time.Millisecond
	// verifyEvery paces the queries that wait for a change to be served.
	verifyEvery = 20 * time.Millisecond
	// verifyFor bounds that wait: a change not served by a skydns within
	// it is a failure.
	verifyFor = 60 * time.Second
)

// soakAnswers collects every answer served during the soak, and the
// lookups that failed.
type soakAnswers struct {
	mu       sync.Mutex
	answers  []soakcheck.Answer
	lookups  int
	retried  int
	failures []string
	delays   []time.Duration // from a change's acknowledgement to a skydns serving it
	acks     []time.Time     // the acknowledgement of each of delays
	unserved []string        // changes a skydns never served within verifyFor
}

func (a *soakAnswers) add(ans soakcheck.Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.answers = append(a.answers, ans)
}

// askA sends one A question for name to server and returns the canonical
// answer: the sorted addresses, NXDOMAIN, or an error for anything else
// (no reply, another rcode, an empty answer).
func askA(server, name string, timeout time.Duration) (string, error) {
	req := new(dns.Msg)
	req.SetQuestion(dns.Fqdn(name), dns.TypeA)
	client := &dns.Client{Net: "udp", Timeout: timeout}
	reply, _, err := client.Exchange(req, server)
	if err != nil {
		return "", err
	}
	return canonicalAnswer(reply)
}

// canonicalAnswer turns a reply into the form the Timeline holds.
func canonicalAnswer(reply *dns.Msg) (string, error) {
	if reply.Rcode == dns.RcodeNameError {
		return nxdomain, nil
	}
	if reply.Rcode != dns.RcodeSuccess {
		return "", fmt.Errorf("rcode %s", dns.RcodeToString[reply.Rcode])
	}
	var addrs []string
	for _, rr := range reply.Answer {
		if a, ok := rr.(*dns.A); ok {
			addrs = append(addrs, a.A.String())
		}
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("no A record in a NOERROR answer")
	}
	slices.Sort(addrs)
	return strings.Join(addrs, ","), nil
}

// resolve runs the client until ctx ends: a lookup of a random pool name
// every lookupEvery, first to one skydns (alternating), then once to the
// other if that fails.
func (a *soakAnswers) resolve(ctx context.Context, rng *rand.Rand, servers []*harness.SkyDNS, pool []string) {
	every(ctx, lookupEvery, func(n int) {
		a.lookup(soakName(pool[rng.IntN(len(pool))]), servers[n%2], servers[(n+1)%2])
	})
}

// lookup asks first, then second if first fails, and records the answer
// or the failure.
func (a *soakAnswers) lookup(name string, first, second *harness.SkyDNS) {
	var errs []string
	for i, s := range []*harness.SkyDNS{first, second} {
		sent := time.Now()
		value, err := askA(s.DNSAddr, name, lookupTimeout)
		if err == nil {
			a.add(soakcheck.Answer{Server: s.DNSAddr, Name: name, Sent: sent, Received: time.Now(), Value: value})
			a.count(i > 0, nil)
			return
		}
		errs = append(errs, fmt.Sprintf("%s: %v", s.DNSAddr, err))
	}
	a.count(true, fmt.Errorf("%s at %s: %s", name, time.Now().Format(time.RFC3339Nano), strings.Join(errs, "; ")))
}

func (a *soakAnswers) count(retried bool, failure error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lookups++
	if retried {
		a.retried++
	}
	if failure != nil {
		a.failures = append(a.failures, failure.Error())
	}
}

// verify waits until each skydns answers name with v's value, and records
// how long after the acknowledgement that was.
func (a *soakAnswers) verify(ctx context.Context, servers []*harness.SkyDNS, name string, v soakcheck.Version) {
	var each sync.WaitGroup
	for _, s := range servers {
		each.Go(func() { a.verifyOn(ctx, s, name, v) })
	}
	each.Wait()
}

func (a *soakAnswers) verifyOn(ctx context.Context, s *harness.SkyDNS, name string, v soakcheck.Version) {
	served, err := a.awaitServed(ctx, s, name, v.Value)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.unserved = append(a.unserved, fmt.Sprintf("%s never answered %s with %s: %v", s.DNSAddr, name, v.Value, err))
		return
	}
	a.delays = append(a.delays, served.Sub(v.Acked))
	a.acks = append(a.acks, v.Acked)
}

// awaitServed asks s for name every verifyEvery until it answers value,
// and returns when that answer arrived.
func (a *soakAnswers) awaitServed(ctx context.Context, s *harness.SkyDNS, name, value string) (time.Time, error) {
	deadline := time.Now().Add(verifyFor)
	last := "no answer"
	for time.Now().Before(deadline) && ctx.Err() == nil {
		sent := time.Now()
		got, err := askA(s.DNSAddr, name, lookupTimeout)
		if err == nil {
			received := time.Now()
			a.add(soakcheck.Answer{Server: s.DNSAddr, Name: name, Sent: sent, Received: received, Value: got})
			if got == value {
				return received, nil
			}
			last = got
		}
		time.Sleep(verifyEvery) // pacing the queries, not waiting for a condition
	}
	return time.Time{}, fmt.Errorf("last answer %s", last)
}
