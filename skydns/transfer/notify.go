package transfer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Defaults of Notifier.
const (
	// DefaultNotifyInterval is the shortest time between two rounds of
	// NOTIFY: changes within it are announced together.
	DefaultNotifyInterval = time.Second
	notifyTimeout         = 2 * time.Second
	notifyTries           = 3
)

// The results Notifier.Observe is told.
const (
	NotifyAcknowledged = "acknowledged" // NOERROR
	NotifyDeclined     = "declined"     // NOTAUTH or REFUSED: the target does not carry the zone
	NotifyRejected     = "rejected"     // any other rcode
	NotifyUnanswered   = "unanswered"   // no answer within the tries
)

// NotifyResults are the results Notifier.Observe is told, for metrics.
var NotifyResults = []string{NotifyAcknowledged, NotifyDeclined, NotifyRejected, NotifyUnanswered}

// Notifier sends NOTIFY (RFC 1996) for every zone to every target when
// told of a change, at most once per interval.
type Notifier struct {
	// Observe, if set, is told the result of every NOTIFY; set it before
	// Run.
	Observe func(result string)

	targets  []string // host:port
	zones    []string
	interval time.Duration
	logger   *slog.Logger
	changed  chan struct{}
}

// NewNotifier returns a Notifier of zones to targets (host:port, see
// ParseTargets); interval 0 is DefaultNotifyInterval.
func NewNotifier(targets, zones []string, interval time.Duration, logger *slog.Logger) *Notifier {
	if interval <= 0 {
		interval = DefaultNotifyInterval
	}
	return &Notifier{targets: targets, zones: zones, interval: interval, logger: logger, changed: make(chan struct{}, 1)}
}

// Changed says the zones changed; it never blocks.
func (n *Notifier) Changed() {
	select {
	case n.changed <- struct{}{}:
	default: // a round is already due
	}
}

// Run sends a round of NOTIFY after each change, until ctx ends. Changes
// that come while a round is sent, or within interval of its start, make
// one more round.
func (n *Notifier) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.changed:
		}
		next := time.NewTimer(n.interval)
		n.round(ctx)
		select {
		case <-ctx.Done():
			next.Stop()
			return
		case <-next.C:
		}
	}
}

// round notifies every target of every zone, the targets in parallel.
func (n *Notifier) round(ctx context.Context) {
	var wg sync.WaitGroup
	for _, target := range n.targets {
		wg.Go(func() {
			for _, zone := range n.zones {
				rcode, err := Notify(ctx, target, zone)
				n.report(target, zone, rcode, err)
			}
		})
	}
	wg.Wait()
}

// report logs a NOTIFY's outcome: a target that does not carry the zone
// (NOTAUTH, REFUSED) is told no more than debug.
func (n *Notifier) report(target, zone string, rcode int, err error) {
	result := NotifyAcknowledged
	switch {
	case err != nil:
		result = NotifyUnanswered
		n.logger.Warn("NOTIFY not answered", "target", target, "zone", zone, "err", err)
	case rcode == dns.RcodeSuccess:
		n.logger.Debug("NOTIFY acknowledged", "target", target, "zone", zone)
	case rcode == dns.RcodeNotAuth || rcode == dns.RcodeRefused:
		result = NotifyDeclined
		n.logger.Debug("NOTIFY declined: the target does not carry the zone", "target", target, "zone", zone, "rcode", dns.RcodeToString[rcode])
	default:
		result = NotifyRejected
		n.logger.Warn("NOTIFY rejected", "target", target, "zone", zone, "rcode", dns.RcodeToString[rcode])
	}
	if n.Observe != nil {
		n.Observe(result)
	}
}

// Notify sends one NOTIFY of zone to target over UDP, trying up to three
// times, and returns the target's rcode.
func Notify(ctx context.Context, target, zone string) (int, error) {
	c := &dns.Client{Net: "udp", Timeout: notifyTimeout}
	m := new(dns.Msg).SetNotify(zone)
	var err error
	for range notifyTries {
		var resp *dns.Msg
		if resp, _, err = c.ExchangeContext(ctx, m, target); err == nil {
			return resp.Rcode, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return 0, fmt.Errorf("NOTIFY %s to %s: %w", zone, target, err)
}
