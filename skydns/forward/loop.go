package forward

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// loopLabel is the label the loop probes' names are made under:
// <16 hex digits>.kubesky-loop.<domain>. Only this forwarder makes such a
// name, so a query for one of its probes that reaches it has come back
// through the upstream it was sent to: a forwarding loop.
const loopLabel = "kubesky-loop"

// The loop check's timing: an upstream whose probe got no reply is
// probed again after loopRetry, one found looping after loopRecheck (to
// see the loop mended), one found clean never again.
const (
	loopRetry   = 5 * time.Second
	loopRecheck = 30 * time.Second
	loopTick    = time.Second
)

// loopVerdict is what the last probe of an upstream found.
type loopVerdict int

const (
	loopUnknown loopVerdict = iota // not probed yet, or no reply
	loopClear                      // the probe was answered without coming back
	loopFound                      // the probe came back: not forwarded to
)

type loopState struct {
	verdict loopVerdict
	next    time.Time // when to probe again; zero: now
}

// loops holds the probes in flight and what each upstream's last probe
// found.
type loops struct {
	mu       sync.Mutex
	pending  map[string]string     // guarded by mu; probe name -> upstream address
	returned map[string]bool       // guarded by mu; probe names that came back
	state    map[string]*loopState // guarded by mu; upstream address -> verdict
}

func newLoops() *loops {
	return &loops{pending: map[string]string{}, returned: map[string]bool{}, state: map[string]*loopState{}}
}

// probeName returns a fresh probe name under domain ("" or "." for the
// root) and records it as in flight to addr.
func (l *loops) probeName(addr, domain string) string {
	name := hex.EncodeToString(randomBytes(8)) + "." + loopLabel + "." + strings.TrimPrefix(dns.Fqdn(domain), ".")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[name] = addr
	return name
}

// cameBack reports whether name (lower case) is a probe of ours in
// flight, and records that it came back.
func (l *loops) cameBack(name string) bool {
	if !strings.Contains(name, "."+loopLabel+".") {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.pending[name]; !ok {
		return false
	}
	l.returned[name] = true
	return true
}

// finish ends the probe name and records its verdict for its upstream
// at now: looped if it came back, clear if answered, unknown if not. It
// returns the upstream and the verdict before.
func (l *loops) finish(name string, answered bool, now time.Time) (addr string, before, after loopVerdict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	addr = l.pending[name]
	returned := l.returned[name]
	delete(l.pending, name)
	delete(l.returned, name)
	s := l.stateOf(addr)
	before = s.verdict
	switch {
	case returned:
		s.verdict, s.next = loopFound, now.Add(loopRecheck)
	case answered:
		s.verdict = loopClear
	default:
		s.next = now.Add(loopRetry) // the verdict stays until a probe decides
	}
	return addr, before, s.verdict
}

func (l *loops) stateOf(addr string) *loopState {
	s, ok := l.state[addr]
	if !ok {
		s = &loopState{}
		l.state[addr] = s
	}
	return s
}

// due returns those of addrs to probe at now, and marks them not due
// until their probe finishes.
func (l *loops) due(addrs []string, now time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, a := range addrs {
		s := l.stateOf(a)
		if s.verdict != loopClear && !s.next.After(now) {
			s.next = now.Add(24 * time.Hour) // until finish sets it
			out = append(out, a)
		}
	}
	return out
}

// usable returns addrs without the upstreams found looping.
func (l *loops) usable(addrs []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(addrs), func(a string) bool {
		s, ok := l.state[a]
		return ok && s.verdict == loopFound
	})
}

// err names the upstreams found looping, in order; nil when none.
func (l *loops) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var looped []string
	for a, s := range l.state {
		if s.verdict == loopFound {
			looped = append(looped, a)
		}
	}
	if len(looped) == 0 {
		return nil
	}
	slices.Sort(looped)
	return fmt.Errorf("forwarding loop through %s: not forwarded to", strings.Join(looped, ", "))
}

// LoopErr says which upstreams a forwarding loop was found through (and
// are not forwarded to); nil when none. It is the forwarder's readiness.
func (f *Forwarder) LoopErr() error { return f.loops.err() }

// CheckLoops starts checking every upstream and stub domain server for a
// forwarding loop, once this server answers queries: each is sent a
// probe, a name only this forwarder makes; if the probe comes back to
// ServeForward, that upstream forwards to this server and is no longer
// forwarded to (a name that only it could answer gets SERVFAIL at once),
// until a later probe (every loopRecheck) comes back no more. Calling it
// again checks at once the upstreams not checked yet.
func (f *Forwarder) CheckLoops() {
	f.loopStart.Do(func() {
		f.background.Add(1)
		go func() {
			defer f.background.Done()
			f.runLoopChecks()
		}()
	})
	select {
	case f.loopKick <- struct{}{}:
	default:
	}
}

// runLoopChecks probes the upstreams that are due, on every kick and
// every loopTick, until the forwarder closes.
func (f *Forwarder) runLoopChecks() {
	tick := time.NewTicker(loopTick)
	defer tick.Stop()
	for {
		for addr, domain := range f.probeTargets() {
			f.background.Add(1)
			go func() {
				defer f.background.Done()
				f.probeLoop(addr, domain)
			}()
		}
		select {
		case <-f.ctx.Done():
			return
		case <-tick.C:
		case <-f.loopKick:
		}
	}
}

// probeTargets returns the upstreams due for a loop probe, each with the
// domain to make its probe's name under: the root for the upstreams, the
// stub domain for a stub domain's servers.
func (f *Forwarder) probeTargets() map[string]string {
	targets := map[string]string{}
	for _, r := range f.stubs.Load().routes() {
		for _, a := range r.addrs {
			targets[a] = r.domain
		}
	}
	for _, a := range f.settings.Load().upstream.addrs {
		targets[a] = "."
	}
	due := f.loops.due(slices.Sorted(maps.Keys(targets)), f.now())
	out := make(map[string]string, len(due))
	for _, a := range due {
		out[a] = targets[a]
	}
	return out
}

// probeLoop sends addr one loop probe under domain and records the
// verdict: any reply, unless the probe came back first, clears it; a
// change is logged.
func (f *Forwarder) probeLoop(addr, domain string) {
	name := f.loops.probeName(addr, domain)
	ctx, cancel := context.WithTimeout(f.ctx, f.deadline)
	defer cancel()
	m := new(dns.Msg).SetQuestion(name, dns.TypeHINFO)
	_, err := f.probeExchange(ctx, m, addr) // as the health probes: not to dnstap
	_, before, after := f.loops.finish(name, err == nil, f.now())
	f.reportLoop(addr, before, after)
}

// reportLoop logs and counts a change of addr's loop verdict.
func (f *Forwarder) reportLoop(addr string, before, after loopVerdict) {
	switch {
	case after == loopFound && before != loopFound:
		f.metrics.loops.WithLabelValues(addr).Set(1)
		f.logger.Error("forwarding loop: a probe sent to this upstream came back to this server; not forwarding to it (names only it could answer get SERVFAIL), the zones are still answered",
			"upstream", addr)
	case after == loopClear && before == loopFound:
		f.metrics.loops.WithLabelValues(addr).Set(0)
		f.logger.Info("forwarding loop gone: forwarding to the upstream again", "upstream", addr)
	}
}

// errLooped means every server of the route is found looping.
var errLooped = errors.New("every upstream forwards back to this server")
