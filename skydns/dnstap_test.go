package skydns

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/freeport"
	"github.com/kubesky/kubesky/internal/polltest"
)

// startTapped starts etcd with web's record, a daemon sending dnstap
// messages to target with a queue of queue and forwarding to a loopback
// upstream, and waits until web is answered; it returns the daemon and
// how many queries that wait sent. edits change the daemon's config.
func startTapped(t *testing.T, target string, queue int, edits ...func(*Config)) (*Daemon, int) {
	t.Helper()
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder, cfg.Forward.Upstreams = nil, []string{fakeUpstream(t, "192.0.2.1")}
	cfg.Dnstap.Target, cfg.Dnstap.Queue, cfg.Dnstap.Identity = target, queue, "skydns-test"
	for _, edit := range edits {
		edit(&cfg)
	}
	d := startDaemon(t, cfg)
	put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
	asked := 0
	polltest.NoComplaint(t, "web's answer", func() string {
		asked++
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
	})
	return d, asked
}

// decoded waits until r has decoded want, message type by type.
func decoded(t *testing.T, r *tapReader, want map[string]int) {
	t.Helper()
	polltest.Eventually(t, "the reader's messages", func() error {
		got, err := r.types()
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("decoded %v, want %v", got, want)
		}
		return nil
	})
}

func TestDnstapReaderDecodesEveryMessage(t *testing.T) {
	dir := shortDir(t)
	sock := filepath.Join(dir, "tap.sock")
	reader := startTapReader(t, sock, filepath.Join(dir, "first.json"))
	d, asked := startTapped(t, "unix:"+sock, 1000)

	const fast = 20 // UDP queries for web: the fast path answers them
	before, _ := fastCounts(t, d)
	for range fast {
		dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA)
	}
	if after, _ := fastCounts(t, d); after-before < fast/2 {
		t.Fatalf("the fast path answered %v of %d queries", after-before, fast)
	}
	dnstest.Ask(t, "tcp", d.DNSAddr(), web, dns.TypeA)
	if resp := dnstest.Ask(t, "udp", d.DNSAddr(), "nothing.default.svc.cluster.local.", dns.TypeA); resp.Rcode != dns.RcodeNameError {
		t.Fatalf("rcode %s, want NXDOMAIN", dns.RcodeToString[resp.Rcode])
	}
	if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "example.org.", dns.TypeA), dns.RcodeSuccess, "192.0.2.1"); msg != "" {
		t.Fatal(msg)
	}
	clients := asked + fast + 3
	t.Run("every query and answer, and the forwarded exchange, are decoded", func(t *testing.T) {
		want := map[string]int{"CLIENT_QUERY": clients, "CLIENT_RESPONSE": clients, "FORWARDER_QUERY": 1, "FORWARDER_RESPONSE": 1}
		decoded(t, reader, want)
		t.Logf("the reader decoded %v", want)
	})
	t.Run("messages resume once a killed reader is back", func(t *testing.T) {
		reader.kill()
		dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA) // answered while the reader is away
		again := startTapReader(t, sock, filepath.Join(dir, "second.json"))
		polltest.Eventually(t, "messages to the new reader", func() error {
			dnstest.Ask(t, "tcp", d.DNSAddr(), web, dns.TypeA)
			got, err := again.types()
			if err == nil && got["CLIENT_RESPONSE"] == 0 {
				err = fmt.Errorf("decoded %v", got)
			}
			return err
		})
	})
}

func TestDnstapDropsWhatTheQueueCannotHoldWithoutDelayingAnswers(t *testing.T) {
	sock := filepath.Join(shortDir(t), "nobody.sock") // no reader ever listens
	const queue = 4
	d, asked := startTapped(t, "unix:"+sock, queue)
	const queries = 50
	for range queries {
		start := time.Now()
		dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("an answer took %s with the queue full", took)
		}
	}
	want := float64(2*(asked+queries) - queue)
	if got := metric(t, d, "skydns_dnstap_dropped_total"); got != want {
		t.Fatalf("skydns_dnstap_dropped_total %v, want %v: two messages per answer beyond the queue's %d", got, want, queue)
	}
}

func TestDnstapReachesAReaderOverTCP(t *testing.T) {
	addr := freeport.HostPort(freeport.Port(t))
	out := filepath.Join(t.TempDir(), "tcp.json")
	reader := &tapReader{cmd: exec.Command(buildDnstap(t), "-l", addr, "-j", "-w", out), out: out}
	reader.start(t)
	polltest.Eventually(t, "the dnstap reader listening on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
	_, asked := startTapped(t, "tcp:"+addr, 1000)
	decoded(t, reader, map[string]int{"CLIENT_QUERY": asked, "CLIENT_RESPONSE": asked})
}

func TestDnstapTellsDNSOverTLSFromTCP(t *testing.T) {
	dir := shortDir(t)
	sock := filepath.Join(dir, "tap.sock")
	reader := startTapReader(t, sock, filepath.Join(dir, "tap.json"))
	ca := newTestCA(t)
	certFile, keyFile, _ := issueServing(t, ca, "dot")
	d, asked := startTapped(t, "unix:"+sock, 1000, func(cfg *Config) {
		cfg.TLS = TLSConfig{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile}
	})
	tcp, err := dns.Dial("tcp", d.DNSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	dot, err := dns.DialWithTLS("tcp-tls", d.TLSAddr(), dotClientConfig(t, ca))
	if err != nil {
		t.Fatal(err)
	}
	defer dot.Close()
	for _, c := range []struct {
		name string
		conn *dns.Conn
	}{{"TCP", tcp}, {"DNS over TLS", dot}} {
		// The forwarded name is a miss over TCP, taking the ordinary path, and cached when asked over DNS over TLS.
		cached := c.conn == dot
		t.Run(fmt.Sprintf("%s: web from the fast path, a forwarded name cached %v", c.name, cached), func(t *testing.T) {
			askOn(t, d, c.conn, web, "10.96.0.10", true)
			askOn(t, d, c.conn, "example.org.", "192.0.2.1", cached)
		})
	}
	byProtocol := func(m tapMessage) string { return m.Type + " " + m.SocketProtocol }
	want := map[string]int{
		"CLIENT_QUERY UDP": asked, "CLIENT_RESPONSE UDP": asked,
		"CLIENT_QUERY TCP": 2, "CLIENT_RESPONSE TCP": 2,
		"CLIENT_QUERY DOT": 2, "CLIENT_RESPONSE DOT": 2,
		"FORWARDER_QUERY UDP": 1, "FORWARDER_RESPONSE UDP": 1, // the second is answered from the forwarder's cache
	}
	polltest.Eventually(t, "the reader's messages by protocol", func() error {
		got, err := reader.count(byProtocol)
		if err == nil && fmt.Sprint(got) != fmt.Sprint(want) {
			err = fmt.Errorf("decoded %v, want %v", got, want)
		}
		return err
	})
}

// askOn asks name's A record on conn, expects addr, and checks that the
// fast path answered it (fast) or passed it on.
func askOn(t *testing.T, d *Daemon, conn *dns.Conn, name, addr string, fast bool) {
	t.Helper()
	answered, passed := fastCounts(t, d)
	if err := conn.WriteMsg(new(dns.Msg).SetQuestion(name, dns.TypeA)); err != nil {
		t.Fatal(err)
	}
	resp, err := conn.ReadMsg()
	if err != nil {
		t.Fatal(err)
	}
	if msg := answerIs(resp, dns.RcodeSuccess, addr); msg != "" {
		t.Fatal(msg)
	}
	nowAnswered, nowPassed := fastCounts(t, d)
	if got := nowAnswered-answered == 1 && nowPassed == passed; got != fast {
		t.Fatalf("%s: fast path answers +%v, passed +%v; want the fast path to answer: %v", name, nowAnswered-answered, nowPassed-passed, fast)
	}
}
