package skydns

import (
	"fmt"
	"net"
	"time"

	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/tap"
)

// startTap starts sending dnstap messages to --dnstap's reader; nothing
// without it.
func (d *Daemon) startTap() error {
	if d.cfg.Dnstap.Target == "" {
		return nil
	}
	t, err := tap.New(d.cfg.Dnstap.config("kubesky skydns "+version.Version), d.metrics.Registry, d.logger.With("component", "dnstap"))
	if err != nil {
		return fmt.Errorf("--dnstap: %w", err)
	}
	d.tap = t
	return nil
}

// tapExchange tells the tap of an answer of the ordinary path.
func (d *Daemon) tapExchange(e dnsserver.Exchange) {
	query, _ := e.Request.Pack()
	resp, _ := e.Response.Pack()
	tr := tap.UDP
	switch {
	case e.TLS:
		tr = tap.TLS
	case e.Proto == "tcp":
		tr = tap.TCP
	}
	now := time.Now()
	d.tap.Client(e.Client, tr, query, resp, now.Add(-e.Duration), now)
}

// fastLog is what is told of every answer of the fast path: the query
// log and the tap, either, both or none (nil).
func (d *Daemon) fastLog() func(client net.Addr, resp []byte, took time.Duration) {
	qlog := d.queryLog()
	switch {
	case d.tap == nil && qlog == nil:
		return nil
	case d.tap == nil:
		return qlog.Wire
	case qlog == nil:
		return d.tap.FastAnswer
	}
	return func(client net.Addr, resp []byte, took time.Duration) {
		qlog.Wire(client, resp, took)
		d.tap.FastAnswer(client, resp, took)
	}
}
