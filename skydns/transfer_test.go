package skydns

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// resolverForTest is a resolver configured as the daemon's.
func (d *Daemon) resolverForTest(t *testing.T) *resolver.Resolver {
	t.Helper()
	res, err := resolver.New(d.cfg.resolverConfig())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// transferDaemon starts etcd with one service and a daemon that lets
// transferTo transfer; it returns the daemon and the revision of the put.
func transferDaemon(t *testing.T, transferTo ...string) (*Daemon, int64) {
	t.Helper()
	etcd := etcdtest.Start(t)
	rev := put(t, etcd, "web.default.svc.cluster.local.", "a1", `{"host":"10.96.0.1"}`)
	cfg := testConfig(etcd.ClientURL())
	cfg.TransferTo = transferTo
	d := startDaemon(t, cfg)
	polltest.NoComplaint(t, "the record is served", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.0.1")
	})
	return d, rev
}

// axfr transfers zone from addr and returns its records, or the error.
func axfr(addr, zone string, qtype uint16, serial uint32) ([]dns.RR, error) {
	m := new(dns.Msg)
	if qtype == dns.TypeIXFR {
		m.SetIxfr(zone, serial, "ns.", "hostmaster.")
	} else {
		m.SetAxfr(zone)
	}
	envs, err := new(dns.Transfer).In(m, addr)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for e := range envs {
		if e.Error != nil {
			return nil, e.Error
		}
		rrs = append(rrs, e.RR...)
	}
	return rrs, nil
}

func TestAnAllowedClientTransfersTheZoneOverTCP(t *testing.T) {
	d, rev := transferDaemon(t, "127.0.0.0/8")
	rrs, err := axfr(d.DNSAddr(), "cluster.local.", dns.TypeAXFR, 0)
	if err != nil {
		t.Fatalf("AXFR: %v", err)
	}
	first, last := rrs[0].(*dns.SOA), rrs[len(rrs)-1].(*dns.SOA)
	if first == nil || last == nil || first.Serial != uint32(rev) || last.Serial != uint32(rev) {
		t.Fatalf("AXFR: %v ... %v; want SOA records with serial %d (the revision) at both ends", rrs[0], rrs[len(rrs)-1], rev)
	}
	if text := rrsText(rrs); !strings.Contains(text, "web.default.svc.cluster.local.\t30\tIN\tA\t10.96.0.1") ||
		!strings.Contains(text, "cluster.local.\t30\tIN\tNS\tns.dns.cluster.local.") {
		t.Fatalf("AXFR lacks the service or the NS:\n%s", text)
	}

	t.Run("an IXFR from the current serial gets the SOA alone", func(t *testing.T) {
		rrs, err := axfr(d.DNSAddr(), "cluster.local.", dns.TypeIXFR, uint32(rev))
		if err != nil || len(rrs) != 1 || rrs[0].Header().Rrtype != dns.TypeSOA {
			t.Fatalf("IXFR: %v, %v; want the SOA alone", rrsText(rrs), err)
		}
	})
	t.Run("an IXFR from an older serial gets the whole zone", func(t *testing.T) {
		got, err := axfr(d.DNSAddr(), "cluster.local.", dns.TypeIXFR, uint32(rev-1))
		if err != nil || rrsText(got) != rrsText(rrs) {
			t.Fatalf("IXFR: %v\n%s\nwant the AXFR's records", err, rrsText(got))
		}
	})
	t.Run("the reverse zone transfers too", func(t *testing.T) {
		if _, err := axfr(d.DNSAddr(), "in-addr.arpa.", dns.TypeAXFR, 0); err != nil {
			t.Fatalf("AXFR in-addr.arpa.: %v", err)
		}
	})
	t.Run("a name that is not an apex gets NOTAUTH", func(t *testing.T) {
		resp := transferQuery(t, "tcp", d.DNSAddr(), "svc.cluster.local.")
		if resp.Rcode != dns.RcodeNotAuth || len(resp.Answer) != 0 {
			t.Fatalf("AXFR svc.cluster.local.: %s with %d records, want NOTAUTH", dns.RcodeToString[resp.Rcode], len(resp.Answer))
		}
	})
	t.Run("over UDP a transfer is REFUSED", func(t *testing.T) {
		if resp := transferQuery(t, "udp", d.DNSAddr(), "cluster.local."); resp.Rcode != dns.RcodeRefused || len(resp.Answer) != 0 {
			t.Fatalf("UDP AXFR: %s with %d records, want REFUSED", dns.RcodeToString[resp.Rcode], len(resp.Answer))
		}
	})
	t.Run("the transfers are counted by result", func(t *testing.T) {
		for _, result := range []string{"transferred", "up_to_date", "not_auth"} {
			if n := metricSum(t, d, "skydns_zone_transfers_total", `result="`+result+`"`); n < 1 {
				t.Errorf("skydns_zone_transfers_total{result=%q} = %v, want at least 1", result, n)
			}
		}
	})
	t.Run("the connection serves queries after a transfer", func(t *testing.T) {
		conn, err := dns.Dial("tcp", d.DNSAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.WriteMsg(new(dns.Msg).SetAxfr("cluster.local.")); err != nil {
			t.Fatal(err)
		}
		for soas := 0; soas < 2; { // the transfer ends with its second SOA
			resp, err := conn.ReadMsg()
			if err != nil {
				t.Fatalf("reading the transfer: %v", err)
			}
			for _, rr := range resp.Answer {
				if rr.Header().Rrtype == dns.TypeSOA {
					soas++
				}
			}
		}
		if err := conn.WriteMsg(new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeA)); err != nil {
			t.Fatal(err)
		}
		resp, err := conn.ReadMsg()
		if err != nil || answerIs(resp, dns.RcodeSuccess, "10.96.0.1") != "" {
			t.Fatalf("a query after the transfer: %v, %v", resp, err)
		}
	})
}

func TestALargeZoneComesInSeveralMessagesWithEveryRecord(t *testing.T) {
	etcd := etcdtest.Start(t)
	var rev int64
	for i := range 400 {
		rev = put(t, etcd, fmt.Sprintf("svc-%d.default.svc.cluster.local.", i), "a1", fmt.Sprintf(`{"host":"10.96.%d.%d"}`, i/256, i%256))
	}
	cfg := testConfig(etcd.ClientURL())
	cfg.TransferTo = []string{"127.0.0.1"}
	d := startDaemon(t, cfg)
	polltest.NoComplaint(t, "the last record is served", func() string {
		return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "svc-399.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.1.143")
	})
	m := new(dns.Msg).SetAxfr("cluster.local.")
	envs, err := new(dns.Transfer).In(m, d.DNSAddr())
	if err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	messages := 0
	for e := range envs {
		if e.Error != nil {
			t.Fatalf("AXFR: %v", e.Error)
		}
		rrs, messages = append(rrs, e.RR...), messages+1
	}
	want, _ := transfer.Records(d.resolverForTest(t), d.Mirror().Snapshot(), "cluster.local.")
	if messages < 2 || rrsText(rrs) != rrsText(want) || rrs[0].(*dns.SOA).Serial != uint32(rev) {
		t.Fatalf("AXFR: %d records in %d messages, want the %d records of transfer.Records at serial %d in several", len(rrs), messages, len(want), rev)
	}

	t.Run("secondaries that ask together get the same zone", func(t *testing.T) {
		var wg sync.WaitGroup
		got := make([]string, 4)
		errs := make([]error, 4)
		for i := range got {
			wg.Go(func() {
				rrs, err := axfr(d.DNSAddr(), "cluster.local.", dns.TypeAXFR, 0)
				got[i], errs[i] = rrsText(rrs), err
			})
		}
		wg.Wait()
		for i := range got {
			if errs[i] != nil || got[i] != rrsText(want) {
				t.Fatalf("transfer %d: %v, %d bytes of records, want the zone", i, errs[i], len(got[i]))
			}
		}
	})
}

func TestAClientOutsideTheAllowListIsRefused(t *testing.T) {
	for _, transferTo := range [][]string{{"192.0.2.0/24"}, nil} {
		d, _ := transferDaemon(t, transferTo...)
		for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
			m := new(dns.Msg)
			m.SetQuestion("cluster.local.", qtype)
			resp, err := dnstest.Send("tcp", d.DNSAddr(), m)
			if err != nil || resp.Rcode != dns.RcodeRefused || len(resp.Answer) != 0 {
				t.Fatalf("--transfer-to %v: %s from 127.0.0.1: %v, %v; want REFUSED", transferTo, dns.TypeToString[qtype], resp, err)
			}
		}
		if n := metricSum(t, d, "skydns_zone_transfers_total", `result="refused"`); transferTo != nil && n != 2 {
			t.Errorf("skydns_zone_transfers_total{result=\"refused\"} = %v, want 2", n)
		}
	}
}

func TestAChangeIsNotifiedToTheSecondaries(t *testing.T) {
	notified := make(chan string, 100)
	secondary := startNotifyListener(t, notified)
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.TransferTo, cfg.Notify = []string{"127.0.0.1"}, []string{secondary}
	d := startDaemon(t, cfg)
	waitNotify(t, notified, "cluster.local.") // the first snapshot
	put(t, etcd, "web.default.svc.cluster.local.", "a1", `{"host":"10.96.0.1"}`)
	waitNotify(t, notified, "cluster.local.")
	polltest.NoComplaint(t, "the NOTIFY counted", func() string {
		if n := metricSum(t, d, "skydns_notify_total", `result="acknowledged"`); n < 2 {
			return fmt.Sprintf("skydns_notify_total{result=\"acknowledged\"} = %v", n)
		}
		return ""
	})
	if resp := dnstest.Ask(t, "tcp", d.DNSAddr(), "cluster.local.", dns.TypeSOA); resp.Rcode != dns.RcodeSuccess {
		t.Fatalf("SOA after NOTIFY: %v", resp)
	}
}

// startNotifyListener answers NOTIFY on 127.0.0.1 and sends each zone
// notified to got; it returns its address.
func startNotifyListener(t *testing.T, got chan<- string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dnstest.Serve(t, &dns.Server{PacketConn: pc,
		MsgAcceptFunc: func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept },
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
			if req.Opcode == dns.OpcodeNotify && len(req.Question) == 1 {
				got <- req.Question[0].Name
			}
			w.WriteMsg(new(dns.Msg).SetReply(req))
		})})
	return pc.LocalAddr().String()
}

func waitNotify(t *testing.T, got <-chan string, zone string) {
	t.Helper()
	polltest.NoComplaint(t, "a NOTIFY of "+zone, func() string {
		select {
		case z := <-got:
			if z == zone {
				return ""
			}
			return "notified " + z
		default:
			return "not notified"
		}
	})
}

func transferQuery(t *testing.T, proto, addr, zone string) *dns.Msg {
	t.Helper()
	return dnstest.Exchange(t, proto, addr, new(dns.Msg).SetAxfr(zone))
}

func rrsText(rrs []dns.RR) string {
	var b strings.Builder
	for _, rr := range rrs {
		b.WriteString(rr.String() + "\n")
	}
	return b.String()
}
