// Package querylog writes one log line per answered DNS query, for the
// classes of answers asked for and a sample of them.
//
// The classes are those of CoreDNS's log plugin: denial (NXDOMAIN, or
// NOERROR with no answer records: NODATA), error (every other rcode:
// SERVFAIL, REFUSED, FORMERR, NOTIMP, ...) and all (every answer,
// successful ones included). A Logger is told of every answer; the
// check of the class and the sample draw neither allocate nor lock, so
// queries whose line is not written cost a few comparisons.
package querylog

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Classes is a set of answer classes.
type Classes uint8

// The classes an answer falls in; All holds every one.
const (
	success Classes = 1 << iota // NOERROR with answer records
	Denial                      // NXDOMAIN and NODATA
	Error                       // any other rcode
	None    Classes = 0
	All             = success | Denial | Error
)

// classNames are the --log-queries values.
var classNames = map[string]Classes{"none": None, "denial": Denial, "error": Error, "all": All}

// ParseClasses reads a --log-queries value: none, denial, error or all,
// or a comma-separated list of them ("denial,error").
func ParseClasses(s string) (Classes, error) {
	var c Classes
	for _, name := range strings.Split(s, ",") {
		class, ok := classNames[strings.TrimSpace(name)]
		if !ok {
			return None, fmt.Errorf("%q is not one of none, denial, error, all (or a comma-separated list of them)", name)
		}
		c |= class
	}
	return c, nil
}

// classOf is the class of an answer with rcode and answers records.
func classOf(rcode, answers int) Classes {
	switch {
	case rcode == dns.RcodeNameError || rcode == dns.RcodeSuccess && answers == 0:
		return Denial
	case rcode == dns.RcodeSuccess:
		return success
	}
	return Error
}

// CheckSampleRate reports whether rate is a --log-queries-sample value:
// above 0 and at most 1.
func CheckSampleRate(rate float64) error {
	if !(rate > 0 && rate <= 1) {
		return fmt.Errorf("%v: want a fraction above 0 and at most 1 (1 logs every query of the classes asked for)", rate)
	}
	return nil
}

// Logger writes the query lines. A nil *Logger logs nothing.
type Logger struct {
	logger  *slog.Logger
	classes Classes
	rate    float64
}

// New returns a Logger writing the answers of classes to logger at level
// INFO, each with probability rate; nil when classes is None.
func New(logger *slog.Logger, classes Classes, rate float64) *Logger {
	if classes == None {
		return nil
	}
	return &Logger{logger: logger, classes: classes, rate: rate}
}

// wants reports whether the answer with rcode and answers records gets a
// line: its class was asked for and the sample draw took it.
func (l *Logger) wants(rcode, answers int) bool {
	return l.classes&classOf(rcode, answers) != 0 && (l.rate >= 1 || rand.Float64() < l.rate)
}

// Line is what one query's line says.
type Line struct {
	Client   net.Addr // the requester's address and port
	Proto    string   // "udp" or "tcp"
	ID       uint16
	Name     string // the question's name as asked
	Type     uint16
	Rcode    int
	Size     int           // the response's length in bytes
	Duration time.Duration // from the query's arrival until its answer was written
	Fast     bool          // the fast path answered
}

// write logs one line.
func (l *Logger) write(q Line) {
	l.logger.LogAttrs(context.Background(), slog.LevelInfo, "query",
		slog.String("client", addrString(q.Client)), slog.String("proto", q.Proto), slog.Int("id", int(q.ID)),
		slog.String("name", q.Name), slog.String("type", dns.Type(q.Type).String()),
		slog.String("rcode", rcodeString(q.Rcode)), slog.Int("size", q.Size),
		slog.Duration("duration", q.Duration), slog.Bool("fast", q.Fast))
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

func rcodeString(rcode int) string {
	if s, ok := dns.RcodeToString[rcode]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rcode)
}

// Wire is told of one answer the fast path sent to client (over UDP when
// client's Network is "udp", else over TCP, DNS over TLS included): resp
// in wire format, whose question is uncompressed right after the header,
// sent took after its batch was read. Answers whose line is not written
// cost no allocation.
func (l *Logger) Wire(client net.Addr, resp []byte, took time.Duration) {
	const headerLen = 12
	if len(resp) < headerLen || !l.wants(int(resp[3]&0xF), int(binary.BigEndian.Uint16(resp[6:]))) {
		return
	}
	name, end, err := dns.UnpackDomainName(resp, headerLen)
	if err != nil || end+2 > len(resp) {
		return
	}
	l.write(Line{Client: client, Proto: wireProto(client), ID: binary.BigEndian.Uint16(resp), Name: name,
		Type: binary.BigEndian.Uint16(resp[end:]), Rcode: int(resp[3] & 0xF), Size: len(resp), Duration: took, Fast: true})
}

// wireProto is the protocol of a fast-path answer to client: "udp" or
// "tcp", as the ordinary path's lines say (DNS over TLS is "tcp").
func wireProto(client net.Addr) string {
	if client == nil || client.Network() == "udp" {
		return "udp"
	}
	return "tcp"
}

// Msg is told of one answer of the ordinary path: resp, as written to
// client over proto, answering req, took after req arrived.
func (l *Logger) Msg(client net.Addr, proto string, req, resp *dns.Msg, took time.Duration) {
	if resp == nil || !l.wants(resp.Rcode, len(resp.Answer)) {
		return
	}
	q := Line{Client: client, Proto: proto, ID: resp.Id, Rcode: resp.Rcode, Size: resp.Len(), Duration: took}
	if len(req.Question) > 0 {
		q.Name, q.Type = req.Question[0].Name, req.Question[0].Qtype
	}
	l.write(q)
}
