package skydns

import (
	"bytes"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
)

// signedQuestions are asked of a signed daemon: an A, an SRV, a PTR, an
// NXDOMAIN, a NODATA, the apex's SOA, NS and DNSKEY.
var signedQuestions = []dns.Question{
	{Name: "web.default.svc.cluster.local.", Qtype: dns.TypeA},
	{Name: "_http._tcp.web.default.svc.cluster.local.", Qtype: dns.TypeSRV},
	{Name: "1.0.96.10.in-addr.arpa.", Qtype: dns.TypePTR},
	{Name: "nosuch.default.svc.cluster.local.", Qtype: dns.TypeA},
	{Name: "web.default.svc.cluster.local.", Qtype: dns.TypeTXT},
	{Name: "cluster.local.", Qtype: dns.TypeSOA},
	{Name: "cluster.local.", Qtype: dns.TypeNS},
	{Name: "cluster.local.", Qtype: dns.TypeDNSKEY},
}

func TestQueriesWithoutTheDOBitGetTheSameBytesFromASignedZone(t *testing.T) {
	z := startSignedZone(t)
	plain := startDaemon(t, testConfig(z.etcd.ClientURL()))
	z.waitForIn(t, plain)
	for _, q := range signedQuestions[:len(signedQuestions)-1] { // DNSKEY: the signed zone has one
		for _, edns := range []bool{false, true} {
			req := new(dns.Msg).SetQuestion(q.Name, q.Qtype)
			if edns {
				req.SetEdns0(1232, false)
			}
			for _, proto := range []string{"udp", "tcp"} {
				signed, unsigned := packed(t, proto, z.d.DNSAddr(), req), packed(t, proto, plain.DNSAddr(), req)
				if !bytes.Equal(signed, unsigned) {
					t.Errorf("%s %s over %s (EDNS %v): the signed zone's answer differs from the unsigned one's", q.Name, dns.TypeToString[q.Qtype], proto, edns)
				}
			}
		}
	}
}

// waitForIn waits until d serves z's records.
func (z *signedZone) waitForIn(t *testing.T, d *Daemon) {
	t.Helper()
	waitRevision(t, d, z.d.Mirror().Snapshot().Revision())
}

// packed is the answer of addr to req over proto, as sent.
func packed(t *testing.T, proto, addr string, req *dns.Msg) []byte {
	t.Helper()
	resp := dnstest.Exchange(t, proto, addr, req)
	b, err := resp.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignedAnswersVerifyOnBothPathsAndAreSignedOnce(t *testing.T) {
	z := startSignedZone(t)
	for _, proto := range []string{"udp", "tcp", "udp"} {
		for _, q := range signedQuestions {
			resp := askDO(t, z.d.DNSAddr(), q.Name, q.Qtype)
			if proto == "tcp" {
				req := new(dns.Msg).SetQuestion(q.Name, q.Qtype)
				req.SetEdns0(1232, true)
				resp = dnstest.Exchange(t, "tcp", z.d.DNSAddr(), req)
			}
			z.verify(t, resp)
		}
	}
	signed := z.d.signer.Signed()
	answered, _ := fastCounts(t, z.d)
	for _, q := range signedQuestions {
		z.verify(t, askDO(t, z.d.DNSAddr(), q.Name, q.Qtype))
	}
	if now, _ := fastCounts(t, z.d); now != answered+float64(len(signedQuestions)) || z.d.signer.Signed() != signed {
		t.Errorf("asked again: %v answered by the fast path, %d RRsets signed; want %d and none",
			now-answered, z.d.signer.Signed()-signed, len(signedQuestions))
	}
}

func TestTheOrdinaryPathSignsWithTheSignaturesItKept(t *testing.T) {
	z := startSignedZoneWith(t, false)
	ask := func() {
		for _, proto := range []string{"udp", "tcp"} {
			for _, q := range signedQuestions {
				req := new(dns.Msg).SetQuestion(q.Name, q.Qtype)
				req.SetEdns0(1232, true)
				z.verify(t, dnstest.Exchange(t, proto, z.d.DNSAddr(), req))
			}
		}
	}
	ask()
	signed := z.d.signer.Signed()
	ask()
	if z.d.signer.Signed() != signed {
		t.Errorf("asked again, the ordinary path signed %d RRsets; want none", z.d.signer.Signed()-signed)
	}
}

func TestAChangedRRsetIsSignedAgainAtOnce(t *testing.T) {
	z := startSignedZone(t)
	first := askDO(t, z.d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA)
	z.verify(t, first)
	waitRevision(t, z.d, put(t, z.etcd, "web.default.svc.cluster.local.", "a2", `{"host":"10.96.0.2"}`))
	second := askDO(t, z.d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA)
	z.verify(t, second)
	if len(second.Answer) != 3 {
		t.Fatalf("want two A records and their RRSIG, got:\n%v", second)
	}
	if first.Answer[1].String() == second.Answer[2].String() {
		t.Errorf("the changed RRset has the old RRset's signature")
	}
	firstA := second.Answer[0].String()
	for range 3 { // the fast path turns the RRset in the signed bytes it keeps
		third := askDO(t, z.d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA)
		z.verify(t, third)
		if third.Answer[0].String() != firstA {
			return
		}
	}
	t.Errorf("the signed A RRset was not rotated in four answers")
}

// verify checks that resp is signed: every RRset of every section has an
// RRSIG by the zone's key that verifies, and the OPT record has DO.
func (z *signedZone) verify(t *testing.T, resp *dns.Msg) {
	t.Helper()
	if opt := resp.IsEdns0(); opt == nil || !opt.Do() {
		t.Errorf("%s: no DO bit in the answer's OPT record", resp.Question[0].Name)
	}
	for _, section := range [][]dns.RR{resp.Answer, resp.Ns, resp.Extra} {
		for _, set := range rrsetsOf(section) {
			z.verifySet(t, set, section)
		}
	}
}

func (z *signedZone) verifySet(t *testing.T, set, section []dns.RR) {
	t.Helper()
	h := set[0].Header()
	verified := false
	for _, rr := range section {
		sig, ok := rr.(*dns.RRSIG)
		if !ok || sig.TypeCovered != h.Rrtype || dns.CanonicalName(sig.Hdr.Name) != dns.CanonicalName(h.Name) {
			continue
		}
		key := z.anchors[sig.SignerName]
		if err := sig.Verify(key, set); err != nil || !sig.ValidityPeriod(time.Now()) {
			t.Errorf("%s %s: %v", h.Name, dns.TypeToString[h.Rrtype], err)
		}
		verified = true
	}
	if !verified {
		t.Errorf("%s %s has no RRSIG", h.Name, dns.TypeToString[h.Rrtype])
	}
}

// rrsetsOf groups the records of section by owner and type, leaving out
// RRSIG and OPT.
func rrsetsOf(section []dns.RR) [][]dns.RR {
	var sets [][]dns.RR
	index := map[[2]string]int{}
	for _, rr := range section {
		h := rr.Header()
		if h.Rrtype == dns.TypeRRSIG || h.Rrtype == dns.TypeOPT {
			continue
		}
		k := [2]string{dns.CanonicalName(h.Name), dns.TypeToString[h.Rrtype]}
		if i, ok := index[k]; ok {
			sets[i] = append(sets[i], rr)
			continue
		}
		index[k] = len(sets)
		sets = append(sets, []dns.RR{rr})
	}
	return sets
}
