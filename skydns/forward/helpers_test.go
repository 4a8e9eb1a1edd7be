package forward

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/kubesky/kubesky/internal/dnstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// handler answers one query an upstream received; a nil reply sends nothing.
type handler func(req *dns.Msg, tcp bool) *dns.Msg

// upstream is a real DNS server on 127.0.0.1, UDP and TCP on one port.
type upstream struct {
	addr     string
	udp, tcp atomic.Int32 // queries received
}

func (u *upstream) queries() int { return int(u.udp.Load() + u.tcp.Load()) }

// startUpstream starts an upstream answering with h until the test ends.
func startUpstream(t *testing.T, h handler) *upstream {
	t.Helper()
	u := &upstream{}
	u.addr = dnstest.StartServer(t, dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		_, tcp := w.RemoteAddr().(*net.TCPAddr)
		if tcp {
			u.tcp.Add(1)
		} else {
			u.udp.Add(1)
		}
		if r := h(req, tcp); r != nil {
			_ = w.WriteMsg(r)
		}
	}))
	return u
}

// rawUpstream is a UDP socket on 127.0.0.1 that answers every packet with
// reply(packet), or with nothing when reply returns nil (a black hole).
type rawUpstream struct {
	addr     string
	received atomic.Int32
}

func startRawUpstream(t *testing.T, reply func(packet []byte) []byte) *rawUpstream {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{addr: pc.LocalAddr().String()}
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			u.received.Add(1)
			if out := reply(buf[:n]); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	})
	t.Cleanup(func() {
		pc.Close()
		wg.Wait()
	})
	return u
}

// blackHole is an upstream that receives queries and never answers.
func blackHole(t *testing.T) *rawUpstream {
	t.Helper()
	return startRawUpstream(t, func([]byte) []byte { return nil })
}

// closedPort returns a 127.0.0.1 UDP address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

// answerA answers every A query with ip and ttl, and other types with NODATA.
func answerA(ip string, ttl uint32) handler {
	return func(req *dns.Msg, _ bool) *dns.Msg {
		m := new(dns.Msg).SetReply(req)
		if req.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, rr(fmt.Sprintf("%s %d IN A %s", req.Question[0].Name, ttl, ip)))
		}
		if opt := req.IsEdns0(); opt != nil {
			m.SetEdns0(opt.UDPSize(), opt.Do())
		}
		return m
	}
}

// negative answers NXDOMAIN, with a SOA of the given TTL and minimum when
// soaTTL is not 0.
func negative(soaTTL, minimum uint32) handler {
	return func(req *dns.Msg, _ bool) *dns.Msg {
		m := new(dns.Msg).SetRcode(req, dns.RcodeNameError)
		if soaTTL != 0 {
			m.Ns = append(m.Ns, rr(fmt.Sprintf("example.org. %d IN SOA ns.example.org. admin.example.org. 1 7200 900 1209600 %d", soaTTL, minimum)))
		}
		return m
	}
}

func rr(s string) dns.RR {
	r, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return r
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testConfig is the default config with the given upstreams and timeouts
// short enough for tests.
func testConfig(upstreams ...string) Config {
	cfg := DefaultConfig()
	cfg.Upstreams = upstreams
	cfg.ForwardTimeout = 300 * time.Millisecond
	cfg.ForwardDeadline = time.Second
	cfg.HealthCheck = 0 // tests of health checks turn them on
	return cfg
}

// testForwarder builds a Forwarder on its own registry and a fake clock.
func testForwarder(t testing.TB, cfg Config) (*Forwarder, *fakeClock, *prometheus.Registry) {
	t.Helper()
	clock := newFakeClock()
	reg := prometheus.NewRegistry()
	f, err := newForwarder(cfg, reg, nil, clock.Now)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(f.Close)
	return f, clock, reg
}

var localClient = netip.MustParseAddr("127.0.0.1")

// query builds a recursive query.
func query(name string, qtype uint16) *dns.Msg {
	return new(dns.Msg).SetQuestion(name, qtype)
}

// ask sends a recursive query for name from 127.0.0.1.
func ask(t *testing.T, f *Forwarder, name string, qtype uint16) *dns.Msg {
	t.Helper()
	return serve(t, f, query(name, qtype), localClient)
}

func serve(t *testing.T, f *Forwarder, req *dns.Msg, client netip.Addr) *dns.Msg {
	t.Helper()
	m := f.ServeForward(t.Context(), req, client)
	if m == nil {
		t.Fatal("ServeForward returned nil")
	}
	if m.Id != req.Id || !m.Response {
		t.Fatalf("reply id %d response %v, want id %d and a response", m.Id, m.Response, req.Id)
	}
	return m
}

// wantRcode fails the test unless m has rcode.
func wantRcode(t *testing.T, m *dns.Msg, rcode int) {
	t.Helper()
	if m.Rcode != rcode {
		t.Fatalf("rcode %s, want %s\n%v", dns.RcodeToString[m.Rcode], dns.RcodeToString[rcode], m)
	}
}

// wantA fails the test unless m's only answer is an A record for ip with ttl.
func wantA(t *testing.T, m *dns.Msg, ip string, ttl uint32) {
	t.Helper()
	wantRcode(t, m, dns.RcodeSuccess)
	if len(m.Answer) != 1 {
		t.Fatalf("answer %v, want one A %s", m.Answer, ip)
	}
	a, ok := m.Answer[0].(*dns.A)
	if !ok || a.A.String() != ip || a.Hdr.Ttl != ttl {
		t.Fatalf("answer %v, want A %s with TTL %d", m.Answer[0], ip, ttl)
	}
}

// value reads a counter or gauge.
func value(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		panic(err)
	}
	if c := out.GetCounter(); c != nil {
		return c.GetValue()
	}
	return out.GetGauge().GetValue()
}

// gathered reads the one unlabelled sample of a metric family from reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			m := mf.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s not gathered", name)
	return 0
}
