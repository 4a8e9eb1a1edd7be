package skydns

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/skydns/captures"
)

// The full-server fuzz targets send the fuzzer's bytes to running daemons
// through real 127.0.0.1 sockets: one daemon with the fast path (its
// parse and cached answers, then miekg/dns's unpack, our accept function,
// resolver and pack for what it passes on), one without (miekg/dns's own
// UDP reading), both forwarding names outside the zones to an upstream on
// 127.0.0.1. A panic, even one the server recovers from (it logs it), a
// query left unanswered, or an answer that breaks the rules fails.

// answerWait bounds the wait for an answer: above the forwarder's
// deadline, so a forwarded query is answered (SERVFAIL at worst) within it.
const answerWait = 6 * time.Second

// fuzzServers are the daemons under fuzzing and their error log.
type fuzzServers struct {
	fast, ordinary *Daemon
	errors         *logBuffer
}

// startFuzzServers starts the two daemons over one etcd holding
// fuzzRecords, and waits until both answer from it.
func startFuzzServers(tb testing.TB) *fuzzServers {
	etcd := etcdtest.Start(tb)
	for key, value := range fuzzRecords() {
		etcd.Put(tb, key, value)
	}
	upstream := fakeUpstream(tb, "192.0.2.1")
	s := &fuzzServers{errors: &logBuffer{}}
	logger := slog.New(slog.NewTextHandler(s.errors, &slog.HandlerOptions{Level: slog.LevelError}))
	start := func(fast bool) *Daemon {
		cfg := testConfig(etcd.ClientURL())
		cfg.FastPath, cfg.UDPSockets = fast, 1
		cfg.Forwarder, cfg.Forward.Upstreams = nil, []string{upstream}
		if err := cfg.Validate(); err != nil {
			tb.Fatal(err)
		}
		d, err := Start(cfg, logger)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d.Stop(ctx)
		})
		waitForSnapshot(tb, d, len(fuzzRecords()))
		return d
	}
	s.fast, s.ordinary = start(true), start(false)
	return s
}

// waitForSnapshot polls, for at most 15 s, until d serves a snapshot of
// at least records records.
func waitForSnapshot(tb testing.TB, d *Daemon, records int) {
	deadline := time.Now().Add(15 * time.Second)
	for d.mirror.Snapshot().Len() < records {
		if time.Now().After(deadline) {
			tb.Fatalf("the daemon serves %d records after 15 s, want %d", d.mirror.Snapshot().Len(), records)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkLogs fails when a daemon logged an error: a recovered panic is one.
func (s *fuzzServers) checkLogs(t *testing.T) {
	if logged := s.errors.String(); logged != "" {
		t.Fatalf("the server logged an error:\n%s", logged)
	}
}

func FuzzServerUDP(f *testing.F) {
	for _, q := range append(captures.Clients(), captures.Hostile()...) {
		f.Add(q)
	}
	s := startFuzzServers(f)
	f.Fuzz(func(t *testing.T, packet []byte) {
		for _, d := range []*Daemon{s.fast, s.ordinary} {
			checkDatagram(t, d.DNSAddr(), packet)
		}
		s.checkLogs(t)
	})
}

func FuzzServerTCP(f *testing.F) {
	for i, stream := range captures.TCPStreams() {
		f.Add(stream, uint16(i*7))
	}
	for i, q := range append(captures.Clients(), captures.Hostile()...) {
		f.Add(captures.TCPFrame(q), uint16(i))
	}
	s := startFuzzServers(f)
	f.Fuzz(func(t *testing.T, stream []byte, split uint16) {
		checkStream(t, s.fast.DNSAddr(), stream, int(split)%(len(stream)+1))
		s.checkLogs(t)
	})
}

// answerable says whether the server must answer msg: it has a header and
// is not a response. Everything else is dropped.
func answerable(msg []byte) bool {
	return len(msg) >= 12 && msg[2]&0x80 == 0
}

// checkDatagram sends packet from a fresh socket and checks the answer,
// or, for a packet to be dropped, that a query sent after it is answered
// and nothing else is.
func checkDatagram(t *testing.T, addr string, packet []byte) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(answerWait))
	if _, err := conn.Write(packet); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	if answerable(packet) {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no answer to %x from %s: %v", packet, addr, err)
		}
		checkAnswer(t, packet, buf[:n], udpLimit(packet))
		return
	}
	sentinel := captures.Dnsperf(^queryID(packet), "web.default.svc.cluster.local.", dns.TypeA, false, false)
	if _, err := conn.Write(sentinel); err != nil {
		t.Fatal(err)
	}
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no answer from %s to a query sent after %x: %v", addr, packet, err)
	}
	if n < 2 || queryID(buf[:n]) != queryID(sentinel) {
		t.Fatalf("%s answered %x, which it must drop, with %x", addr, packet, buf[:n])
	}
}

// checkStream writes stream on a fresh TCP connection in two parts, split
// at split, waiting after the first for the answers to the messages it
// completes (so the server reads a message split across reads), then
// half-closes and checks that every message with a header that is not a
// response was answered, in any order (RFC 7766), and that the server
// then closed.
func checkStream(t *testing.T, addr string, stream []byte, split int) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * answerWait))
	msgs := tcpMessages(stream)
	reader := bufio.NewReader(conn)
	readUpTo := func(end int) {
		var pending [][]byte
		for len(msgs) > 0 && msgs[0].end <= end {
			if answerable(msgs[0].data) {
				pending = append(pending, msgs[0].data)
			}
			msgs = msgs[1:]
		}
		answers := make([][]byte, len(pending))
		for i := range answers {
			answers[i] = readFrame(t, reader, stream)
		}
		for q, a := range pairAnswers(t, pending, answers) {
			checkAnswer(t, pending[q], answers[a], dns.MaxMsgSize)
		}
	}
	write(t, conn, stream[:split])
	readUpTo(split)
	write(t, conn, stream[split:])
	readUpTo(len(stream))
	conn.(*net.TCPConn).CloseWrite()
	if extra, err := reader.ReadByte(); err == nil {
		t.Fatalf("the server sent more than the answers to %x (next byte %#x)", stream, extra)
	} else if !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("the server did not close after the stream %x: %v", stream, err)
	}
}

// pairAnswers pairs each query of pending with one of answers (the
// server answers pipelined queries in any order, and queries may share an
// ID): it returns, for each query, the index of its answer. An answer may
// answer a query when it has the query's ID and opcode and either repeats
// its question, or carries none (a rejection), or the query's question
// does not read from the wire (the server echoes what it made of it). Queries sharing an ID are
// told apart by a maximum bipartite matching, so a rejection never takes
// the one answer another query could have; a query left without an answer
// fails the test.
func pairAnswers(t *testing.T, pending, answers [][]byte) []int {
	answerOf := make([]int, len(pending))
	queryOf := make([]int, len(answers))
	for i := range answerOf {
		answerOf[i] = -1
	}
	for i := range queryOf {
		queryOf[i] = -1
	}
	var seen []bool
	var augment func(q int) bool
	augment = func(q int) bool {
		for a := range answers {
			if seen[a] || !mayAnswer(pending[q], answers[a]) {
				continue
			}
			seen[a] = true
			if queryOf[a] < 0 || augment(queryOf[a]) {
				queryOf[a], answerOf[q] = q, a
				return true
			}
		}
		return false
	}
	for q := range pending {
		seen = make([]bool, len(answers))
		if !augment(q) {
			t.Fatalf("no answer for %x among %x", pending[q], answers)
		}
	}
	return answerOf
}

// mayAnswer reports whether answer can be the answer to q: same ID and
// opcode, and q's question, or none, or q's question is unreadable.
func mayAnswer(q, answer []byte) bool {
	if queryID(q) != queryID(answer) || !sameOpcode(q, answer) {
		return false
	}
	return firstQuestion(answer) == "" || firstQuestion(q) == "" || sameQuestion(q, answer)
}

// sameOpcode reports whether two messages carry the same opcode (a
// rejection keeps the query's).
func sameOpcode(a, b []byte) bool { return len(a) > 2 && len(b) > 2 && (a[2]>>3)&0xF == (b[2]>>3)&0xF }

// sameQuestion reports whether two messages open with the same question,
// ignoring the case of the name.
func sameQuestion(a, b []byte) bool {
	qa, qb := firstQuestion(a), firstQuestion(b)
	return qa != "" && strings.EqualFold(qa, qb)
}

// firstQuestion is the text of msg's first question, read from the wire,
// or "" when it has none or it does not parse.
func firstQuestion(msg []byte) string {
	if len(msg) < 12 || msg[4] == 0 && msg[5] == 0 {
		return ""
	}
	name, off, err := dns.UnpackDomainName(msg, 12)
	if err != nil || off+4 > len(msg) {
		return ""
	}
	return fmt.Sprintf("%s %x", name, msg[off:off+4])
}

// tcpMessage is a message of a TCP stream and the offset its frame ends at.
type tcpMessage struct {
	data []byte
	end  int
}

// tcpMessages are the complete length-prefixed messages of stream.
func tcpMessages(stream []byte) []tcpMessage {
	var msgs []tcpMessage
	for off := 0; off+2 <= len(stream); {
		n := int(binary.BigEndian.Uint16(stream[off:]))
		if off+2+n > len(stream) {
			break
		}
		msgs = append(msgs, tcpMessage{data: stream[off+2 : off+2+n], end: off + 2 + n})
		off += 2 + n
	}
	return msgs
}

func write(t *testing.T, conn net.Conn, b []byte) {
	if _, err := conn.Write(b); err != nil && !isReset(err) {
		t.Fatalf("writing to the server: %v", err)
	}
}

// readFrame reads one length-prefixed answer to query.
func readFrame(t *testing.T, r *bufio.Reader, query []byte) []byte {
	var size [2]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		t.Fatalf("no answer over TCP to %x: %v", query, err)
	}
	frame := make([]byte, binary.BigEndian.Uint16(size[:]))
	if _, err := io.ReadFull(r, frame); err != nil {
		t.Fatalf("a cut answer over TCP to %x: %v", query, err)
	}
	return frame
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

func queryID(msg []byte) uint16 {
	if len(msg) < 2 {
		return 0
	}
	return binary.BigEndian.Uint16(msg)
}

// udpLimit is the largest answer the sender of query accepts over UDP: its
// EDNS buffer size within [512, the server's 4096], or 512.
func udpLimit(query []byte) int {
	m := new(dns.Msg)
	if m.Unpack(query) != nil || m.IsEdns0() == nil {
		return dns.MinMsgSize
	}
	return min(max(int(m.IsEdns0().UDPSize()), dns.MinMsgSize), 4096)
}

// checkAnswer checks what every answer must be: a response that parses,
// with the query's ID, within limit bytes, echoing the query's question
// when it has one.
func checkAnswer(t *testing.T, query, answer []byte, limit int) {
	t.Helper()
	if len(answer) > limit {
		t.Fatalf("a %d-byte answer to %x; the client accepts %d", len(answer), query, limit)
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(answer); err != nil {
		t.Fatalf("the answer %x to %x does not parse: %v", answer, query, err)
	}
	if !resp.Response || resp.Id != queryID(query) {
		t.Fatalf("the answer to %x is not a response with its ID:\n%v", query, resp)
	}
	// The question is read from the wire as pairAnswers reads it: a query
	// whose question is cut short (miekg/dns would read the missing type
	// and class as zeros) has none to echo.
	req := new(dns.Msg)
	if req.Unpack(query) != nil || len(req.Question) != 1 || firstQuestion(query) == "" || firstQuestion(answer) == "" {
		return
	}
	if !sameQuestion(query, answer) {
		t.Fatalf("the answer to %x has another question:\nquery:\n%v\nanswer:\n%v", query, req, resp)
	}
}

// TestEveryCaptureIsAnsweredOverUDPAndTCP runs the fuzz targets' checks
// on the seeds alone, and checks that the clients' captures are answered
// from the zone, not refused.
func TestEveryCaptureIsAnsweredOverUDPAndTCP(t *testing.T) {
	s := startFuzzServers(t)
	for _, q := range captures.Clients() {
		for _, d := range []*Daemon{s.fast, s.ordinary} {
			checkDatagram(t, d.DNSAddr(), q)
		}
		checkStream(t, s.fast.DNSAddr(), captures.TCPFrame(q), 1)
		if resp := rawQuery(t, "udp", s.fast.DNSAddr(), q); resp.Rcode == dns.RcodeRefused || resp.Rcode == dns.RcodeServerFailure {
			t.Errorf("capture %x answered %s", q, dns.RcodeToString[resp.Rcode])
		}
	}
	for _, q := range captures.Hostile() {
		checkDatagram(t, s.fast.DNSAddr(), q)
	}
	for _, stream := range captures.TCPStreams() {
		checkStream(t, s.fast.DNSAddr(), stream, len(stream)/2)
	}
	s.checkLogs(t)
}
