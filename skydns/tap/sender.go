package tap

import (
	"context"
	"log/slog"
	"net"
	"time"

	dnstap "github.com/dnstap/golang-dnstap"
	framestream "github.com/farsightsec/golang-framestream"
	"google.golang.org/protobuf/proto"
)

const (
	// ioTimeout bounds a dial, the Frame Streams handshake and each write.
	ioTimeout = 2 * time.Second
	// redialMin and redialMax bound the wait between dials of a reader
	// that is away; it doubles from one to the other.
	redialMin = 50 * time.Millisecond
	redialMax = time.Second
)

// sender writes the queue's messages to the reader, dialing it again
// whenever a dial or a write fails.
type sender struct {
	network, addr string
	tap           *Tap
	logger        *slog.Logger
	done          chan struct{} // closed by stop
	finished      chan struct{} // closed when run returns
}

func startSender(network, addr string, t *Tap, logger *slog.Logger) *sender {
	s := &sender{network: network, addr: addr, tap: t, logger: logger,
		done: make(chan struct{}), finished: make(chan struct{})}
	go s.run()
	return s
}

func (s *sender) stop() {
	close(s.done)
	<-s.finished
}

// run connects, writes until a write fails, and connects again, until
// stop.
func (s *sender) run() {
	defer close(s.finished)
	wait := redialMin
	for {
		w, conn, err := s.connect()
		if err == nil {
			s.logger.Info("dnstap reader connected", "target", s.network+":"+s.addr)
			wait = redialMin
			err = s.write(w)
			s.finish(w, conn, err)
		}
		if err == nil { // stopped
			return
		}
		s.tap.metrics.failed.Inc()
		s.logFailure(err, wait)
		if !s.pause(wait) {
			return
		}
		wait = min(2*wait, redialMax)
	}
}

// connect dials the reader and does the Frame Streams handshake.
func (s *sender) connect() (*framestream.Writer, net.Conn, error) {
	conn, err := net.DialTimeout(s.network, s.addr, ioTimeout)
	if err != nil {
		return nil, nil, err
	}
	w, err := framestream.NewWriter(conn, &framestream.WriterOptions{
		ContentTypes: [][]byte{dnstap.FSContentType}, Bidirectional: true, Timeout: ioTimeout})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return w, conn, nil
}

// write writes queued messages, flushing whenever the queue is empty,
// until a write fails (its error) or stop (nil).
func (s *sender) write(w *framestream.Writer) error {
	for {
		var m *dnstap.Message
		select {
		case m = <-s.tap.queue:
		case <-s.done:
			return nil
		}
		if err := s.writeOne(w, m); err != nil {
			return err
		}
		if len(s.tap.queue) == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// writeOne encodes m and writes it as one frame.
func (s *sender) writeOne(w *framestream.Writer, m *dnstap.Message) error {
	typ := dnstap.Dnstap_MESSAGE
	frame, err := proto.Marshal(&dnstap.Dnstap{Identity: s.tap.identity, Version: s.tap.version, Type: &typ, Message: m})
	if err != nil {
		s.logger.Error("encoding a dnstap message", "err", err)
		return nil
	}
	if _, err := w.WriteFrame(frame); err != nil {
		return err
	}
	s.tap.metrics.sent.Inc()
	return nil
}

// finish ends the stream: in order (STOP, then FINISH) when the writing
// stopped without an error, else just the connection.
func (s *sender) finish(w *framestream.Writer, conn net.Conn, err error) {
	if err == nil {
		w.Flush()
		w.Close()
	}
	conn.Close()
}

// pause waits d, and reports false if stop came first.
func (s *sender) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// logFailure logs a failed dial or write: a warning for the first of a
// series, then at debug level.
func (s *sender) logFailure(err error, wait time.Duration) {
	level := slog.LevelWarn
	if wait > redialMin {
		level = slog.LevelDebug
	}
	s.logger.Log(context.Background(), level, "dnstap reader unreachable, dialing again", "target", s.network+":"+s.addr, "err", err, "in", wait)
}
