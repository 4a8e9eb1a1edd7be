package fastpath

import (
	"net"
	"testing"
	"time"
)

// TestAnsweringACachedQueryAllocatesNothing runs a socket's reader by
// hand over loopback: read a batch, answer from the cache, send. Once the
// answer is cached, a query costs no allocation from the read to the
// answer's write.
func TestAnsweringACachedQueryAllocatesNothing(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cache, stats := newTestCache(&fakeAnswers{ttl: 30}, 100)
	r, err := newReader(conn, cache, stats.NewShard(true), newFallbackConn(conn, &stats.dropped), false, Config{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	query, err := aQuery("n.2.test.", 1232).Pack()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, fakeMaxUDPSize)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	ask := func() int { // one query through the reader; the answer's length
		client.Write(query)
		n, err := r.batch.read(r.in[:1])
		if err != nil || n != 1 {
			t.Fatalf("read: %d, %v", n, err)
		}
		r.serve(n)
		got, err := client.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if resp := unpack(t, buf[:ask()]); resp.Rcode != 0 || len(resp.Answer) != 2 { // fills the cache
		t.Fatalf("answer %v", resp)
	}
	if stats.Totals().FastAnswers != 1 {
		t.Fatalf("fast answers %d, want 1", stats.Totals().FastAnswers)
	}
	if raceEnabled {
		t.Log("allocations not counted: the race detector allocates on its own")
		return
	}
	if allocs := testing.AllocsPerRun(50, func() { ask() }); allocs != 0 {
		t.Errorf("%v allocations per cached query, want none", allocs)
	}
}
