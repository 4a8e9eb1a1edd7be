package tap

import (
	"bytes"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		value, network, addr string // network "": rejected
	}{
		{"unix:/run/skydns/tap.sock", "unix", "/run/skydns/tap.sock"},
		{"tcp:127.0.0.1:6000", "tcp", "127.0.0.1:6000"},
		{"tcp:[::1]:6000", "tcp", "[::1]:6000"},
		{"tcp:127.0.0.1", "", ""},
		{"udp:127.0.0.1:6000", "", ""},
		{"/run/skydns/tap.sock", "", ""},
		{"unix:", "", ""},
	}
	for _, tc := range tests {
		network, addr, err := ParseTarget(tc.value)
		if tc.network == "" {
			if err == nil {
				t.Errorf("%q: %s %s, want an error", tc.value, network, addr)
			}
			continue
		}
		if err != nil || network != tc.network || addr != tc.addr {
			t.Errorf("%q: %q %q %v, want %q %q", tc.value, network, addr, err, tc.network, tc.addr)
		}
	}
}

func TestQueryOfRebuildsTheQueryFromItsAnswer(t *testing.T) {
	q := new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeAAAA)
	q.CheckingDisabled = true
	r := new(dns.Msg).SetRcode(q, dns.RcodeNameError)
	r.Authoritative, r.RecursionAvailable = true, true
	r.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: "cluster.local.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 30},
		Ns: "ns.dns.cluster.local.", Mbox: "hostmaster.cluster.local.", Serial: 1}}
	r.Compress = true
	resp, err := r.Pack()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := q.Pack()
	if got := QueryOf(resp); !bytes.Equal(got, want) {
		t.Fatalf("QueryOf = %x, want the query %x", got, want)
	}
	for _, short := range [][]byte{nil, resp[:12], resp[:20]} {
		if got := QueryOf(short); got != nil {
			t.Errorf("QueryOf(%d bytes) = %x, want nil", len(short), got)
		}
	}
}

func TestCloseStopsTheSenderWhileTheReaderIsAway(t *testing.T) {
	defer goleak.VerifyNone(t)
	tp, err := New(Config{Target: "unix:" + t.TempDir() + "/nobody.sock", Queue: 1}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tp.Client(nil, UDP, []byte{0}, []byte{0}, time.Now(), time.Now())
	tp.Close()
	var m dto.Metric
	if err := tp.metrics.dropped.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 1 {
		t.Fatalf("dropped %v, want 1 of the two messages with a queue of 1", got)
	}
}

// dotClient is a DNS over TLS client's address as the fast path gives it.
type dotClient struct{ *net.TCPAddr }

func (dotClient) Network() string { return "tls" }

func TestAFastPathClientsNetworkIsItsTransport(t *testing.T) {
	tcp := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}
	for _, c := range []struct {
		client net.Addr
		want   Transport
	}{{nil, UDP}, {&net.UDPAddr{IP: tcp.IP, Port: 53}, UDP}, {tcp, TCP}, {dotClient{tcp}, TLS}} {
		if got := transportOf(c.client); got != c.want {
			t.Errorf("transportOf(%v) = %v, want %v", c.client, got, c.want)
		}
	}
}
