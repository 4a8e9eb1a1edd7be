package forward

import (
	"context"
	"time"

	"github.com/miekg/dns"
)

// probe starts, unless one runs already, a background check of addr, an
// upstream that just failed: every --forward-health-check it is asked for
// the root's NS records without recursion. Any well-formed reply, whatever
// its rcode, means the server is back: it rejoins the healthy ones and the
// probe ends. Each failed probe keeps it held, so clients' queries go to
// the healthy upstreams first for as long as it stays down.
func (f *Forwarder) probe(addr string) {
	if f.healthCheck == 0 || f.ctx.Err() != nil || !f.health.startProbe(addr) {
		return
	}
	f.background.Add(1)
	go func() {
		defer f.background.Done()
		defer f.health.endProbe(addr)
		tick := time.NewTicker(f.healthCheck)
		defer tick.Stop()
		for {
			select {
			case <-f.ctx.Done():
				return
			case <-tick.C:
			}
			if !f.health.held(addr) || f.probeOnce(addr) {
				return
			}
		}
	}()
}

// probeOnce asks addr once and records the outcome; true means it answered.
func (f *Forwarder) probeOnce(addr string) bool {
	ctx, cancel := context.WithTimeout(f.ctx, f.timeout)
	defer cancel()
	m := new(dns.Msg).SetQuestion(".", dns.TypeNS)
	m.RecursionDesired = false
	r, err := f.probeExchange(ctx, m, addr)
	if err == nil && r.Response {
		f.metrics.probes.WithLabelValues(addr, resultOK).Inc()
		if f.health.ok(addr) {
			f.logger.Info("upstream answers the health check again", "upstream", addr)
		}
		return true
	}
	if f.ctx.Err() == nil {
		f.metrics.probes.WithLabelValues(addr, classify(err)).Inc()
		f.health.failed(addr)
		f.health.probeFailure(addr)
	}
	return false
}
