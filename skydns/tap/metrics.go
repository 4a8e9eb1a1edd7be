package tap

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics count what became of the messages.
type metrics struct {
	sent, dropped, failed prometheus.Counter
}

func newMetrics() *metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "skydns", Subsystem: "dnstap", Name: name, Help: help})
	}
	return &metrics{
		sent:    counter("sent_total", "dnstap messages written to the reader."),
		dropped: counter("dropped_total", "dnstap messages dropped because the queue (--dnstap-queue) was full: the reader was away or slow."),
		failed:  counter("connection_errors_total", "Failed dials of, and writes to, the dnstap reader; each is followed by a new dial."),
	}
}

func (m *metrics) register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.sent), reg.Register(m.dropped), reg.Register(m.failed))
}
