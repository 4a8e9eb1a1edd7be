// Package tap sends dnstap messages (https://dnstap.info) of the queries
// skydns answers and forwards to a dnstap reader on a Unix or TCP socket,
// as Frame Streams.
//
// Answering never waits for the reader: each message is put on a bounded
// queue, or dropped and counted when the queue is full. One goroutine
// encodes the queue's messages and writes them; when the reader goes
// away it dials again until the reader is back.
package tap

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	dnstap "github.com/dnstap/golang-dnstap"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultQueue is the default number of messages waiting for the reader.
const DefaultQueue = 10000

// Config says where the messages go.
type Config struct {
	// Target is "unix:/path/to/socket" or "tcp:host:port".
	Target string
	// Identity is each message's identity; empty: the host name.
	Identity string
	// Version is each message's version string.
	Version string
	// Queue bounds the messages waiting for the reader (default
	// DefaultQueue); beyond it they are dropped.
	Queue int
}

// ParseTarget reads a --dnstap value: "unix:/path" or "tcp:host:port".
func ParseTarget(s string) (network, addr string, err error) {
	network, addr, ok := strings.Cut(s, ":")
	switch {
	case !ok || addr == "":
		return "", "", errors.New("want unix:/path/to/socket or tcp:host:port")
	case network == "unix":
		return network, addr, nil
	case network == "tcp":
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", "", err
		}
		return network, addr, nil
	}
	return "", "", fmt.Errorf("network %q is not unix or tcp", network)
}

// Tap queues messages and sends them. A nil *Tap sends nothing.
type Tap struct {
	identity, version []byte
	queue             chan *dnstap.Message
	sender            *sender
	metrics           *metrics
}

// New checks cfg, registers the metrics on reg (nil: not registered) and
// starts sending.
func New(cfg Config, reg prometheus.Registerer, logger *slog.Logger) (*Tap, error) {
	network, addr, err := ParseTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Identity == "" {
		cfg.Identity, _ = os.Hostname()
	}
	m := newMetrics()
	if reg != nil {
		if err := m.register(reg); err != nil {
			return nil, err
		}
	}
	t := &Tap{identity: []byte(cfg.Identity), version: []byte(cfg.Version),
		queue: make(chan *dnstap.Message, cfg.Queue), metrics: m}
	t.sender = startSender(network, addr, t, logger)
	return t, nil
}

// Close stops sending; messages still queued are dropped.
func (t *Tap) Close() {
	if t != nil {
		t.sender.stop()
	}
}

// enqueue queues m, or drops and counts it when the queue is full.
func (t *Tap) enqueue(m *dnstap.Message) {
	select {
	case t.queue <- m:
	default:
		t.metrics.dropped.Inc()
	}
}
