package skydns

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// questionless is a query header with ID 9 and QDCOUNT 1, and no question
// after it: the packet that once made the ordinary path index an empty
// question list.
const questionless = "000900000001000000000000"

func TestAQuestionlessQueryGetsFormerrAndTheServerGoesOn(t *testing.T) {
	pkt, _ := hex.DecodeString(questionless)
	for _, fast := range []bool{true, false} {
		etcd := etcdtest.Start(t)
		cfg := testConfig(etcd.ClientURL())
		cfg.FastPath = fast
		d := startDaemon(t, cfg)
		put(t, etcd, "web.default.svc.cluster.local.", "a", `{"host":"10.96.0.7"}`)
		for _, proto := range []string{"udp", "tcp"} {
			t.Run(proto+fastName(fast), func(t *testing.T) {
				resp := rawQuery(t, proto, d.DNSAddr(), pkt)
				if resp == nil {
					t.Fatal("no answer to the questionless query")
				}
				if resp.Id != 9 || resp.Rcode != dns.RcodeFormatError || !resp.Response {
					t.Fatalf("got id %d rcode %s, want a FORMERR response with id 9", resp.Id, dns.RcodeToString[resp.Rcode])
				}
				polltest.NoComplaint(t, "an answer after the questionless query", func() string {
					return answerIs(dnstest.Ask(t, proto, d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.0.7")
				})
			})
		}
		for _, path := range []string{"fast", "udp", "tcp", "forward"} {
			if got := metric(t, d, `skydns_panics_total{path="`+path+`"}`); got != 0 {
				t.Errorf("skydns_panics_total{path=%q} = %v, want 0", path, got)
			}
		}
	}
}

func fastName(fast bool) string {
	if fast {
		return " with the fast path"
	}
	return " without the fast path"
}

// rawQuery sends pkt as one datagram, or over TCP with its length, and
// returns the response (nil when none came within 2 s).
func rawQuery(t *testing.T, proto, addr string, pkt []byte) *dns.Msg {
	t.Helper()
	conn, err := net.Dial(proto, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if proto == "tcp" {
		pkt = append(binary.BigEndian.AppendUint16(nil, uint16(len(pkt))), pkt...)
	}
	if _, err := conn.Write(pkt); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, dns.MaxMsgSize+2)
	n, err := conn.Read(buf)
	if err != nil {
		return nil
	}
	if proto == "tcp" {
		buf = buf[2:n]
	} else {
		buf = buf[:n]
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(buf); err != nil {
		t.Fatalf("unpacking the response: %v", err)
	}
	return resp
}

// panicky is a Forwarder that panics on every query.
type panicky struct{}

func (panicky) Forward(context.Context, dnsserver.Query) *dns.Msg { panic("forwarder bug") }

func TestAPanicInTheForwarderIsAnsweredServfailCountedAndLogged(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = panicky{}
	logs := &logBuffer{}
	d, err := Start(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop(context.Background()) })
	put(t, etcd, "web.default.svc.cluster.local.", "a", `{"host":"10.96.0.7"}`)
	for _, proto := range []string{"udp", "tcp"} {
		if resp := dnstest.Ask(t, proto, d.DNSAddr(), "example.org.", dns.TypeA); resp.Rcode != dns.RcodeServerFailure {
			t.Fatalf("%s: rcode %s, want SERVFAIL", proto, dns.RcodeToString[resp.Rcode])
		}
	}
	if got := metric(t, d, `skydns_panics_total{path="forward"}`); got != 2 {
		t.Errorf(`skydns_panics_total{path="forward"} = %v, want 2`, got)
	}
	if n := logs.count("forwarder bug"); n != 2 {
		t.Errorf("the panic was logged %d times, want once per query:\n%s", n, logs)
	}
	wire, _ := new(dns.Msg).SetQuestion("example.org.", dns.TypeA).Pack()
	if hexName := hex.EncodeToString(wire[2:]); !strings.Contains(logs.String(), hexName) {
		t.Errorf("the log does not hold the query's packet (%s):\n%s", hexName, logs)
	}
	polltest.NoComplaint(t, "an answer from the zone after the panics", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.0.7")
	})
}
