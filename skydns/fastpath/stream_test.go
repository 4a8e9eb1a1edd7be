package fastpath

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

var tcpClient = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

func packMsg(t *testing.T, m *dns.Msg) []byte {
	t.Helper()
	wire, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return wire
}

// frames splits a batch into its messages.
func frames(t *testing.T, batch []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(batch) > 0 {
		if len(batch) < 2 || len(batch) < 2+int(binary.BigEndian.Uint16(batch)) {
			t.Fatalf("a cut frame: %x", batch)
		}
		n := int(binary.BigEndian.Uint16(batch))
		out = append(out, batch[2:2+n])
		batch = batch[2+n:]
	}
	return out
}

func TestAStreamAppendsWholeFramedAnswers(t *testing.T) {
	s := startServer(t, &fakeAnswers{ttl: 30}, 1)
	st := s.NewStream(tcpClient)
	st.Refresh()
	big := aQuery("N.100.test.", 0) // 100 records: no EDNS, far above 512 bytes
	big.Id = 7
	small := aQuery("n.2.test.", 1232)
	small.Id = 8
	batch := []byte{0, 0} // what the batch held before, a frame of nothing
	var ok bool
	for _, q := range []*dns.Msg{big, small} {
		if batch, ok = st.Answer(batch, packMsg(t, q)); !ok {
			t.Fatalf("the stream passed on the plain query %v", q.Question[0])
		}
	}
	st.Sent(batch, time.Millisecond)
	got := frames(t, batch)
	if len(got) != 3 || len(got[0]) != 0 {
		t.Fatalf("%d frames, want the first untouched and two answers", len(got))
	}
	for i, want := range []struct {
		id      uint16
		records int
		edns    bool
	}{{7, 100, false}, {8, 2, true}} {
		m := unpack(t, got[i+1])
		if m.Id != want.id || m.Truncated || len(m.Answer) != want.records || (m.IsEdns0() != nil) != want.edns {
			t.Errorf("answer %d: want ID %d, %d records, EDNS %v, not truncated:\n%v", i+1, want.id, want.records, want.edns, m)
		}
	}
	if m := unpack(t, got[1]); m.Question[0].Name != "N.100.test." {
		t.Errorf("question %q, want the query's case", m.Question[0].Name)
	}
	tcp := 0
	s.stats.Totals().EachRequest(func(_ string, tr Transport, _ string, n uint64) {
		if tr == TCP4 {
			tcp += int(n)
		}
	})
	if tcp != 2 {
		t.Errorf("%d TCP requests counted, want 2", tcp)
	}
}

func TestAStreamLeavesTheRestToTheOrdinaryPath(t *testing.T) {
	s := startServer(t, &fakeAnswers{ttl: 30}, 1)
	st := s.NewStream(tcpClient)
	st.Refresh()
	do := aQuery("n.1.test.", 1232)
	do.IsEdns0().SetDo()
	for name, pkt := range map[string][]byte{
		"the DO bit":     packMsg(t, do),
		"a name outside": packMsg(t, aQuery("example.org.", 0)),
		"a header only":  make([]byte, 12),
		"nothing":        nil,
		"a cut question": packMsg(t, aQuery("n.1.test.", 0))[:20],
	} {
		batch, ok := st.Answer([]byte("before"), pkt)
		if ok || !bytes.Equal(batch, []byte("before")) {
			t.Errorf("%s: answered %v, batch %q; want it passed on, the batch unchanged", name, ok, batch)
		}
	}
	if passed := s.stats.Totals().Passed; passed != 5 {
		t.Errorf("%d passed on, want 5", passed)
	}
}

func TestAStreamAnswersWithoutAllocating(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	s := startServer(t, &fakeAnswers{ttl: 30}, 1)
	st := s.NewStream(tcpClient)
	queries := [][]byte{packMsg(t, aQuery("n.3.test.", 0)), packMsg(t, aQuery("n.1.test.", 1232))}
	var batch []byte
	answer := func() {
		st.Refresh()
		batch = batch[:0]
		for _, q := range queries {
			batch, _ = st.Answer(batch, q)
		}
		st.Sent(batch, time.Microsecond)
	}
	answer() // fills the cache and the buffers
	if allocs := testing.AllocsPerRun(100, answer); allocs != 0 {
		t.Errorf("a batch of two answers allocates %.1f times, want 0", allocs)
	}
}
