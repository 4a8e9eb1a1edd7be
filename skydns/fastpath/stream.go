package fastpath

import (
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// Stream answers the plain queries of one TCP connection from the answers
// the Server's UDP readers share, and counts them. It belongs to the
// connection's reading goroutine. The caller frames the messages and
// writes the answers: Answer appends each answer, with its 2-byte length,
// to the batch of answers to write, Sent counts the batch once written.
type Stream struct {
	cache     *Cache
	stats     *Shard
	transport Transport
	client    net.Addr
	panicked  func(pkt []byte, value any)
	logAnswer func(client net.Addr, resp []byte, took time.Duration) // nil: no query log

	series []Series // of the answers since the last Sent
	starts []int    // where each of them starts in the batch, for the query log
}

// NewStream returns a Stream for a connection from client, the address
// Config.LogAnswer is told of: a *net.TCPAddr, or over DNS over TLS an
// address whose Network is "tls".
func (s *Server) NewStream(client net.Addr) *Stream {
	cache := NewCache(CacheConfig{Source: s.cfg.Source, Changes: s.cfg.Changes, MaxUDPSize: s.cfg.MaxUDPSize,
		Store: s.store, Stats: s.tcpStats, Turns: &s.tcpTurns})
	ipv6 := false
	if a, ok := client.(interface{ AddrPort() netip.AddrPort }); ok {
		ipv6 = !a.AddrPort().Addr().Unmap().Is4()
	}
	return &Stream{cache: cache, stats: s.tcpStats, transport: NewTransport(true, ipv6), client: client,
		panicked: s.cfg.Panicked, logAnswer: s.cfg.LogAnswer}
}

// Refresh brings the cache to the answers' current version: call it
// before each batch of queries read.
func (st *Stream) Refresh() { st.cache.Refresh() }

// Answer appends the answer to the query pkt, framed (its length first),
// to batch. ok is false, and batch unchanged, when the ordinary path must
// answer pkt (counted as passed on). A panic while answering is reported and answered SERVFAIL,
// as on the UDP readers.
func (st *Stream) Answer(batch, pkt []byte) (_ []byte, ok bool) {
	start := len(batch)
	resp, series, ok := st.reply(append(batch, 0, 0), pkt)
	if !ok {
		st.stats.pass()
		return batch, false
	}
	n := len(resp) - start - 2
	binary.BigEndian.PutUint16(resp[start:], uint16(n))
	st.stats.Answered(series, st.transport, len(pkt), n)
	st.series = append(st.series, series)
	if st.logAnswer != nil {
		st.starts = append(st.starts, start+2)
	}
	return resp, true
}

func (st *Stream) reply(out, pkt []byte) (resp []byte, series Series, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			st.panicked(pkt, v)
			series = st.stats.stats.Series("", 0, false, dns.RcodeServerFailure)
			var sf []byte
			sf, ok = servfail(nil, pkt)
			resp = append(out, sf...)
		}
	}()
	return st.cache.AppendStreamReply(out, pkt, st.client)
}

// Sent records that the answers Answer appended to batch since the last
// Sent went out took after their queries were read.
func (st *Stream) Sent(batch []byte, took time.Duration) {
	if len(st.series) == 0 {
		return
	}
	st.stats.TookEach(st.series, took)
	st.series = st.series[:0]
	for _, at := range st.starts {
		n := int(binary.BigEndian.Uint16(batch[at-2:]))
		st.logAnswer(st.client, batch[at:at+n], took)
	}
	st.starts = st.starts[:0]
}
