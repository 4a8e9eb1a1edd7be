package fastpath

import (
	"testing"

	"github.com/miekg/dns"
)

// nxdomain is a packed NXDOMAIN for name with soaOwner's SOA and an OPT
// record, compressed.
func nxdomain(name, soaOwner string) []byte {
	m := new(dns.Msg).SetQuestion(name, dns.TypeA)
	m.Id, m.Response, m.Rcode, m.Compress = 1, true, dns.RcodeNameError, true
	m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: soaOwner, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 30},
		Ns: "ns.dns." + soaOwner, Mbox: "hostmaster." + soaOwner, Serial: 7, Minttl: 30}}
	m.SetEdns0(fakeMaxUDPSize, false)
	return wire{m}.pack()
}

func TestDenialTemplateIsTheDeniedNamesAnswer(t *testing.T) {
	got, d, ok := denialTemplate(nxdomain("a.b.gone.test.", "test."), len("a.b.gone.test.")+1, len("gone.test.")+1)
	if !ok {
		t.Fatal("not made")
	}
	if want := nxdomain("gone.test.", "test."); string(got) != string(want) || d.nameLen != len("gone.test.")+1 {
		t.Fatalf("template\n%x\nwant the denied name's own answer\n%x", got, want)
	}
	if len(d.pointers) != 3 {
		t.Errorf("%d pointers, want the SOA's owner, primary and mailbox", len(d.pointers))
	}
}

func TestDenialTemplateRefusesPointersIntoTheLabelsRemoved(t *testing.T) {
	if _, _, ok := denialTemplate(nxdomain("a.b.gone.test.", "b.gone.test."), len("a.b.gone.test.")+1, len("gone.test.")+1); ok {
		t.Fatal("made, though the SOA's owner is a label the template removes")
	}
	noData := nxdomain("a.gone.test.", "test.")
	noData[3] &^= 0xF
	if _, _, ok := denialTemplate(noData, len("a.gone.test.")+1, len("gone.test.")+1); ok {
		t.Fatal("made from an answer that is not NXDOMAIN")
	}
}

// fakeDenials answers every name below "gone.test." NXDOMAIN, denying
// everything below "gone.test.", and counts its fills.
type fakeDenials struct{ fakeAnswers }

func (f *fakeDenials) Fill(name string, qtype uint16) (Answer, bool) {
	f.computed++
	m := new(dns.Msg)
	if err := m.Unpack(nxdomain(name, "test.")); err != nil {
		panic(err)
	}
	m.Question[0].Qtype = qtype
	return Answer{Wire: wire{m}.pack(), Version: f.version, SerialIsVersion: true, Names: []string{name, "gone.test."},
		DeniedBelow: "gone.test."}, true
}

func TestNamesBelowADeniedNameTakeOneFillAndAllocateNothing(t *testing.T) {
	src := &fakeDenials{}
	c, _ := newTestCache(src, 100)
	c.Refresh()
	out := make([]byte, 0, fakeMaxUDPSize)
	for _, name := range []string{"a.gone.test.", "b.c.Gone.test.", "gone.test."} {
		pkt := wire{aQuery(name, 1232)}.pack()
		resp, _, ok := c.Reply(out, pkt, nil)
		if got := unpack(t, resp); !ok || got.Rcode != dns.RcodeNameError || got.Question[0].Name != name || got.Ns[0].Header().Name != "test." {
			t.Fatalf("%s: want NXDOMAIN for the question asked with the SOA of test., got (answered %v)\n%v", name, ok, got)
		}
	}
	if src.computed != 1 {
		t.Errorf("%d fills, want 1: the names below the denied one share its answer", src.computed)
	}
	if raceEnabled {
		return
	}
	pkt := wire{aQuery("x.y.gone.test.", 1232)}.pack()
	if allocs := testing.AllocsPerRun(100, func() { c.Reply(out, pkt, nil) }); allocs != 0 {
		t.Errorf("a denial allocates %.1f times, want 0", allocs)
	}
}
