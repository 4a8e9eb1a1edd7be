//go:build unix

package fastpath

import (
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/kubesky/kubesky/skydns/rrl"
)

// Batch sizes: up to batchSize queries are read with one recvmmsg, each
// into a readSize buffer (as large as the ordinary server reads). Each
// call prepares every slot it offers, so the number offered follows the
// number that arrive, between minBatch and batchSize.
const (
	batchSize = 64
	minBatch  = 4
	readSize  = 4096
)

// reader serves one socket: it reads a batch of queries, answers those it
// can from its cache, writes those answers in one batch, and passes the
// rest to the ordinary path.
type reader struct {
	conn      *net.UDPConn
	batch     *batchReader // for reading
	writer    *batchWriter // for writing
	cache     *Cache
	stats     *Shard
	fallback  *fallbackConn
	pktinfo   bool // the socket reports destination addresses
	logger    *slog.Logger
	panicked  func(pkt []byte, value any)
	logAnswer func(client net.Addr, resp []byte, took time.Duration) // nil: no query log
	rrl       *rrl.Limiter                                           // nil: no response rate limiting

	in     []ipv4.Message // queries; Buffers[0] and OOB fixed
	out    []ipv4.Message // answers; Buffers[0] points into bufs
	bufs   [][]byte       // answer buffers, one per slot
	series []Series       // what each answer is counted under, per slot
	offer  int            // slots offered to the next read
}

func newReader(conn *net.UDPConn, cache *Cache, stats *Shard, fallback *fallbackConn, pktinfo bool, cfg Config) (*reader, error) {
	batch, err := newBatchReader(conn, batchSize)
	if err != nil {
		return nil, err
	}
	writer, err := newBatchWriter(conn, batchSize)
	if err != nil {
		return nil, err
	}
	r := &reader{conn: conn, batch: batch, writer: writer, cache: cache, stats: stats, fallback: fallback, pktinfo: pktinfo,
		logger: cfg.Logger, panicked: cfg.Panicked, logAnswer: cfg.LogAnswer, rrl: cfg.RRL, offer: minBatch, in: make([]ipv4.Message, batchSize), out: make([]ipv4.Message, batchSize), bufs: make([][]byte, batchSize),
		series: make([]Series, batchSize)}
	for i := range batchSize {
		r.in[i].Buffers = [][]byte{make([]byte, readSize)}
		r.out[i].Buffers = make([][]byte, 1)
		r.bufs[i] = make([]byte, 0, minMsgSize) // grown by a larger answer, and kept
		if pktinfo {
			r.in[i].OOB = make([]byte, oobSize)
			r.out[i].OOB = make([]byte, oobSize)
		}
	}
	return r, nil
}

// run serves until the socket is closed.
func (r *reader) run() error {
	for {
		n, err := r.batch.read(r.in[:r.offer])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			if retryable(err) {
				continue
			}
			return err
		}
		r.serve(n)
	}
}

// serve answers the n queries just read, sends the answers in one batch
// and passes on the rest.
func (r *reader) serve(n int) {
	start := time.Now()
	r.adapt(n)
	r.cache.Refresh()
	answered := r.answer(r.in[:n])
	r.send(r.out[:answered])
	if answered > 0 {
		took := time.Since(start)
		r.stats.TookEach(r.series[:answered], took)
		if r.logAnswer != nil {
			r.logAnswers(r.out[:answered], took)
		}
	}
}

// adapt offers more slots after a read that filled them all, and fewer
// after one that used under a quarter.
func (r *reader) adapt(n int) {
	switch {
	case n == r.offer && r.offer < batchSize:
		r.offer *= 2
	case n < r.offer/4 && r.offer > minBatch:
		r.offer /= 2
	}
}

// retryable reports errors a later read may not see: interrupted calls
// and a momentary lack of kernel memory.
func retryable(err error) bool {
	return errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.ENOMEM)
}

// answer fills r.out with the answers to the queries it can answer, in
// order, passes the others on, and returns how many it answered.
func (r *reader) answer(queries []ipv4.Message) int {
	k := 0
	for i := range queries {
		q := &queries[i]
		pkt := q.Buffers[0][:q.N]
		if q.Flags&unix.MSG_TRUNC == 0 {
			if resp, series, ok := r.reply(k, pkt, q.Addr); ok {
				if r.rrl != nil {
					if resp = limit(r.rrl, resp, q.Addr); resp == nil {
						continue
					}
				}
				r.addAnswer(k, resp, q)
				r.series[k] = series
				r.stats.Answered(series, udpTransport(q.Addr), len(pkt), len(resp))
				k++
				continue
			}
		}
		if from, ok := q.Addr.(*net.UDPAddr); ok {
			r.stats.pass()
			r.fallback.pass(pkt, from, q.OOB[:q.NN])
		}
	}
	return k
}

// limit applies l to resp, the answer to a query from addr: resp, its
// truncated form, or nil when nothing is to be sent.
func limit(l *rrl.Limiter, resp []byte, addr net.Addr) []byte {
	from, ok := addr.(*net.UDPAddr)
	if !ok {
		return resp
	}
	switch l.Decide(from.AddrPort().Addr()) {
	case rrl.Drop:
		return nil
	case rrl.Slip:
		return rrl.Truncate(resp)
	}
	return resp
}

// reply is the cache's answer to pkt in answer slot k's buffer, and the
// Series it is counted under. A panic while answering is reported and
// answered SERVFAIL (counted outside the zones, type "other"): one query
// cannot stop the socket's reader.
func (r *reader) reply(k int, pkt []byte, addr net.Addr) (resp []byte, series Series, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			r.panicked(pkt, v)
			series = r.stats.stats.Series("", 0, false, dns.RcodeServerFailure)
			resp, ok = servfail(r.bufs[k], pkt)
		}
	}()
	return r.cache.Reply(r.bufs[k], pkt, addr)
}

// udpTransport is the transport of a UDP query from addr (the batch
// reader gives IPv4 senders 4-byte IPs).
func udpTransport(addr net.Addr) Transport {
	a, ok := addr.(*net.UDPAddr)
	if !ok || len(a.IP) == net.IPv4len || a.IP.To4() != nil {
		return UDP4
	}
	return UDP6
}

// addAnswer puts resp, the answer to q, into answer slot k.
func (r *reader) addAnswer(k int, resp []byte, q *ipv4.Message) {
	a := &r.out[k]
	r.bufs[k] = resp
	a.Buffers[0] = resp
	a.Addr = q.Addr
	if r.pktinfo {
		a.OOB = replyControl(a.OOB[:cap(a.OOB)], q.OOB[:q.NN])
	}
}

// send writes the answers; one that fails is dropped, as UDP would.
func (r *reader) send(answers []ipv4.Message) {
	for len(answers) > 0 {
		n, err := r.writer.write(answers)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			r.logger.Debug("writing DNS answers", "err", err)
			n = max(n, 1) // skip the answer that failed
		}
		answers = answers[n:]
	}
}

// logAnswers tells the query log of the answers just sent.
func (r *reader) logAnswers(answers []ipv4.Message, took time.Duration) {
	for i := range answers {
		r.logAnswer(answers[i].Addr, answers[i].Buffers[0], took)
	}
}

// addr is the socket's address.
func (r *reader) addr() net.Addr { return r.conn.LocalAddr() }
