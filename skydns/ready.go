package skydns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// readiness is the answer to /readyz: the checks that decide whether this
// replica should receive queries, in order, and the snapshot's freshness,
// which is reported but decides nothing unless --max-stale is set.
type readiness struct {
	checks    []check
	reported  []check // reported with ?verbose, deciding nothing
	freshness string
}

// check is one readiness condition; err is nil while it holds.
type check struct {
	name string
	err  error
}

// err is the first failed check's error, nil when every check holds.
func (r readiness) err() error {
	for _, c := range r.checks {
		if c.err != nil {
			return c.err
		}
	}
	return nil
}

// writeVerbose writes one line per check ([+] holds, [-] failed), the
// freshness, and the verdict.
func (r readiness) writeVerbose(w io.Writer) {
	for _, c := range r.checks {
		if c.err != nil {
			fmt.Fprintf(w, "[-]%s failed: %v\n", c.name, c.err)
		} else {
			fmt.Fprintf(w, "[+]%s ok\n", c.name)
		}
	}
	for _, c := range r.reported {
		if c.err != nil {
			fmt.Fprintf(w, "[!]%s: %v (reported, does not decide readiness)\n", c.name, c.err)
		} else {
			fmt.Fprintf(w, "[+]%s ok\n", c.name)
		}
	}
	fmt.Fprintf(w, "freshness: %s\n", r.freshness)
	if r.err() != nil {
		fmt.Fprintln(w, "readyz check failed")
		return
	}
	fmt.Fprintln(w, "readyz check passed")
}

// readiness says whether the daemon can answer: its DNS listeners open,
// the first full list done, and not shutting down. An unreachable etcd
// does not make it unready (every replica would turn unready at once
// with a shared etcd, and DNS would be lost although each holds a good
// snapshot), unless cfg.MaxStale bounds the staleness.
func (d *Daemon) readiness() readiness {
	now := time.Now()
	checks := []check{
		{"dns-listening", d.listening()},
		{"synced", d.mirror.Ready()},
		{"not-draining", d.draining()},
	}
	if d.cfg.NodeLocal.Enabled() {
		checks = append([]check{{"node-local", d.nodeLocal.err()}}, checks...)
	}
	if d.cfg.MaxStale > 0 {
		checks = append(checks, check{"max-stale", d.withinMaxStale(now)})
	}
	reported := d.forwardReadiness()
	if d.clusterset != nil {
		reported = append(reported, d.clusterset.readiness())
	}
	return readiness{checks: checks, reported: reported, freshness: d.mirror.Freshness(now)}
}

// forwardReadiness is the forwarder's readiness: no forwarding loop found.
// It is reported, and served alone at /readyz/forward, but does not make
// the replica unready: the zones are still answered.
func (d *Daemon) forwardReadiness() []check {
	if d.loops == nil {
		return nil
	}
	return []check{{"forward", d.loops.LoopErr()}}
}

func (d *Daemon) listening() error {
	if d.closing.Load() {
		return errors.New("shutting down: DNS listeners closing")
	}
	return nil
}

func (d *Daemon) draining() error {
	if d.lameduck.Load() {
		return errors.New("shutting down: lameduck, still answering until the listeners close")
	}
	return nil
}

func (d *Daemon) withinMaxStale(now time.Time) error {
	stale := time.Duration(staleSeconds(d.mirror.State(), now) * float64(time.Second))
	if stale > d.cfg.MaxStale {
		return fmt.Errorf("stale: snapshot last confirmed current by etcd %s ago, more than --max-stale %s",
			stale.Round(100*time.Millisecond), d.cfg.MaxStale)
	}
	return nil
}

// Lameduck turns /readyz 503 and keeps answering for cfg.Lameduck, or
// until ctx ends, so that Services and load balancers stop sending queries
// here before Stop closes the listeners. Run calls it on a stop signal.
func (d *Daemon) Lameduck(ctx context.Context) {
	d.lameduck.Store(true)
	if d.cfg.Lameduck <= 0 {
		return
	}
	d.logger.Info("lameduck: /readyz is 503, DNS still answering", "for", d.cfg.Lameduck)
	t := time.NewTimer(d.cfg.Lameduck)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
