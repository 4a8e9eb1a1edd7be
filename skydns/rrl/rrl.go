// Package rrl is response rate limiting for UDP answers: each client
// network (a /24 for IPv4, a /56 for IPv6 by default) may receive so many
// responses per second; beyond that, answers are dropped, except every
// slip-th one, which goes out empty with TC=1 so that a real client retries
// over TCP (where the source address is proven) while a spoofed victim of a
// reflection attack receives little. Exempt networks are never limited.
//
// A Limiter is a token bucket per client network: it holds up to one
// second's worth of responses and refills continuously.
package rrl

import (
	"net/netip"
	"sync"
	"time"
)

// Action is what to do with one response.
type Action uint8

const (
	Send Action = iota // send it
	Drop               // send nothing
	Slip               // send it empty, truncated (TC=1)
)

// maxNetworks bounds the buckets kept; past it, idle ones are forgotten.
const maxNetworks = 100_000

// Config are a Limiter's settings.
type Config struct {
	// ResponsesPerSecond per client network; 0 turns limiting off.
	ResponsesPerSecond int
	// Slip: every Slip-th dropped response is sent truncated instead; 0
	// drops them all, 1 truncates them all.
	Slip int
	// IPv4PrefixLen and IPv6PrefixLen group clients into networks.
	IPv4PrefixLen, IPv6PrefixLen int
	// Exempt networks are never limited.
	Exempt []netip.Prefix
}

// Limiter decides, response by response, what each client network gets.
// It is safe for concurrent use.
type Limiter struct {
	cfg  Config
	rate float64 // tokens per nanosecond
	now  func() time.Time

	mu      sync.Mutex
	buckets map[netip.Prefix]*bucket // guarded by mu
}

type bucket struct {
	tokens  float64
	updated time.Time
	dropped int // responses limited since the bucket was made
}

// New returns a Limiter, or nil when cfg.ResponsesPerSecond is 0: a nil
// Limiter is how callers know limiting is off, at the cost of one check.
func New(cfg Config) *Limiter {
	return newLimiter(cfg, time.Now)
}

func newLimiter(cfg Config, now func() time.Time) *Limiter {
	if cfg.ResponsesPerSecond <= 0 {
		return nil
	}
	return &Limiter{cfg: cfg, rate: float64(cfg.ResponsesPerSecond) / float64(time.Second), now: now,
		buckets: map[netip.Prefix]*bucket{}}
}

// Decide takes one response to client from its network's bucket.
func (l *Limiter) Decide(client netip.Addr) Action {
	client = client.Unmap()
	for _, p := range l.cfg.Exempt {
		if p.Contains(client) {
			return Send
		}
	}
	network := l.network(client)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(network, now)
	b.tokens = min(b.tokens+float64(now.Sub(b.updated))*l.rate, float64(l.cfg.ResponsesPerSecond))
	b.updated = now
	if b.tokens >= 1 {
		b.tokens--
		return Send
	}
	b.dropped++
	if l.cfg.Slip > 0 && b.dropped%l.cfg.Slip == 0 {
		return Slip
	}
	return Drop
}

func (l *Limiter) network(client netip.Addr) netip.Prefix {
	bits := l.cfg.IPv6PrefixLen
	if client.Is4() {
		bits = l.cfg.IPv4PrefixLen
	}
	p, _ := client.Prefix(bits)
	return p
}

// bucket returns network's bucket, making a full one; l.mu is held.
func (l *Limiter) bucket(network netip.Prefix, now time.Time) *bucket {
	if b, ok := l.buckets[network]; ok {
		return b
	}
	if len(l.buckets) >= maxNetworks {
		l.forgetIdle(now)
	}
	b := &bucket{tokens: float64(l.cfg.ResponsesPerSecond), updated: now}
	l.buckets[network] = b
	return b
}

// forgetIdle drops the buckets that have refilled (idle for a second or
// more): a new bucket would be the same. l.mu is held.
func (l *Limiter) forgetIdle(now time.Time) {
	for network, b := range l.buckets {
		if now.Sub(b.updated) >= time.Second {
			delete(l.buckets, network)
		}
	}
}
