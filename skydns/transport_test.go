package skydns

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestLargeAnswers serves one name with 200 A records (about 3.2 KB
// compressed) through the whole daemon.
func TestLargeAnswers(t *testing.T) {
	const n = 200
	const big = "big.default.svc.cluster.local."
	etcd, d := startWithEtcd(t)
	putMany(t, etcd, big, n)
	polltest.NoComplaint(t, "all records over TCP", func() string {
		if got := len(dnstest.Ask(t, "tcp", d.DNSAddr(), big, dns.TypeA).Answer); got != n {
			return fmt.Sprintf("%d answers", got)
		}
		return ""
	})
	tests := []struct {
		name      string
		edns      uint16
		truncated bool
	}{
		{"UDP without EDNS gets a truncated answer", 0, true},
		{"UDP with a small EDNS size gets a truncated answer", 1232, true},
		{"UDP with EDNS 4096 gets the whole answer", 4096, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := new(dns.Msg).SetQuestion(big, dns.TypeA)
			if tc.edns > 0 {
				q.SetEdns0(tc.edns, false)
			}
			resp, size := rawExchange(t, d.DNSAddr(), q)
			limit := max(int(tc.edns), 512)
			if resp.Truncated != tc.truncated || size > limit || (!tc.truncated && len(resp.Answer) != n) {
				t.Fatalf("TC=%v, %d bytes, %d answers; want TC=%v within %d bytes", resp.Truncated, size, len(resp.Answer), tc.truncated, limit)
			}
			if (tc.edns > 0) != (resp.IsEdns0() != nil) {
				t.Fatalf("OPT in answer: %v, want it exactly when the query had one", resp.IsEdns0() != nil)
			}
		})
	}
}

// putMany writes n A records for name in transactions of 100 keys.
func putMany(t *testing.T, etcd *etcdtest.Server, name string, n int) {
	t.Helper()
	key := contract.Key(contract.DefaultPrefix, name)
	var ops []clientv3.Op
	for i := range n {
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("%s/r%d", key, i), fmt.Sprintf(`{"host":"10.3.%d.%d"}`, i/256, i%256)))
		if len(ops) == 100 || i == n-1 {
			commit(t, etcd, ops)
			ops = nil
		}
	}
}

// rawExchange sends q over UDP and returns the answer and its size on the
// wire.
func rawExchange(t *testing.T, addr string, q *dns.Msg) (*dns.Msg, int) {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	packed, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(packed); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, dns.MaxMsgSize)
	size, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(buf[:size]); err != nil {
		t.Fatal(err)
	}
	return resp, size
}

func TestMalformedPacketGetsFormerr(t *testing.T) {
	_, d := startWithEtcd(t)
	garbled := []byte{0xab, 0xcd, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x3f, 'x'} // label longer than the packet
	conn, err := net.Dial("udp", d.DNSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(garbled)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	size, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no answer to a garbled question: %v", err)
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(buf[:size]); err != nil || resp.Id != 0xabcd || resp.Rcode != dns.RcodeFormatError {
		t.Fatalf("got %v (id %#x, rcode %d), want FORMERR for id 0xabcd", err, resp.Id, resp.Rcode)
	}
}
