package dnssec

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

const zone = "cluster.local."

// testKey is a new key of zone, read back from its files.
func testKey(t *testing.T, sep bool) Key {
	t.Helper()
	path, err := NewKey(t.TempDir(), zone, sep)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ReadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// names is a zone's contents for the denial: the types at each existing
// name.
type names map[string][]uint16

func (n names) Exists(name string) bool    { _, ok := n[name]; return ok }
func (n names) Types(name string) []uint16 { return n[name] }

var testNames = names{
	zone:                             {dns.TypeSOA, dns.TypeNS},
	"svc.cluster.local.":             nil,
	"default.svc.cluster.local.":     {dns.TypeA},
	"web.default.svc.cluster.local.": {dns.TypeA},
}

// query is a question for name and qtype, with the DO bit when do is set.
func query(name string, qtype uint16, do bool) *dns.Msg {
	req := new(dns.Msg).SetQuestion(name, qtype)
	req.SetEdns0(1232, do)
	return req
}

// answerA is the resolver's answer to req: name's A records.
func answerA(req *dns.Msg, ips ...string) *dns.Msg {
	resp := new(dns.Msg).SetReply(req)
	for _, ip := range ips {
		resp.Answer = append(resp.Answer, rr(req.Question[0].Name+" 30 IN A "+ip))
	}
	return resp
}

// negative is the resolver's NXDOMAIN or NODATA answer to req.
func negative(req *dns.Msg, rcode int) *dns.Msg {
	resp := new(dns.Msg).SetRcode(req, rcode)
	resp.Ns = []dns.RR{rr("cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 7 7200 1800 86400 30")}
	return resp
}

func rr(s string) dns.RR {
	r, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return r
}

// verify checks every RRSIG of section against the RRset it covers with
// keys, and that every RRset of the zone has one.
func verify(t *testing.T, section []dns.RR, keys ...Key) {
	t.Helper()
	sets := rrsets(section)
	for _, set := range sets {
		if set[0].Header().Rrtype == dns.TypeRRSIG {
			continue
		}
		sigs := sigsOf(sets, set[0])
		if len(sigs) == 0 {
			t.Errorf("no RRSIG for %s", set[0])
		}
		for _, sig := range sigs {
			k := keyOf(keys, sig.KeyTag)
			if k == nil {
				t.Errorf("RRSIG by key %d, which is not one of the keys", sig.KeyTag)
				continue
			}
			if err := sig.Verify(k.DNSKEY, set); err != nil || !sig.ValidityPeriod(time.Now()) {
				t.Errorf("RRSIG %s does not verify %s: %v", sig, set[0], err)
			}
		}
	}
}

func sigsOf(sets [][]dns.RR, first dns.RR) []*dns.RRSIG {
	var sigs []*dns.RRSIG
	for _, set := range sets {
		for _, r := range set {
			if sig, ok := r.(*dns.RRSIG); ok && sig.TypeCovered == first.Header().Rrtype && strings.EqualFold(sig.Hdr.Name, first.Header().Name) {
				sigs = append(sigs, sig)
			}
		}
	}
	return sigs
}

func keyOf(keys []Key, tag uint16) *Key {
	for i := range keys {
		if keys[i].DNSKEY.KeyTag() == tag {
			return &keys[i]
		}
	}
	return nil
}

func TestAnRRsetIsSignedOnceAndItsSignaturesReused(t *testing.T) {
	k := testKey(t, true)
	s := New(Config{Keys: []Key{k}})
	for range 3 {
		req := query("web.default.svc.cluster.local.", dns.TypeA, true)
		resp := answerA(req, "10.96.0.1", "10.96.0.2")
		s.Apply(resp, req, zone, testNames)
		verify(t, resp.Answer, k)
	}
	req := query("web.default.svc.cluster.local.", dns.TypeA, true)
	rotated := answerA(req, "10.96.0.2", "10.96.0.1")
	s.Apply(rotated, req, zone, testNames)
	verify(t, rotated.Answer, k)
	if s.Signed() != 1 {
		t.Errorf("signed %d RRsets for one RRset asked four times (once turned), want 1", s.Signed())
	}
}

func TestAChangedRRsetIsSignedAgain(t *testing.T) {
	k := testKey(t, true)
	s := New(Config{Keys: []Key{k}})
	for _, ip := range []string{"10.96.0.1", "10.96.0.2"} {
		req := query("web.default.svc.cluster.local.", dns.TypeA, true)
		resp := answerA(req, ip)
		s.Apply(resp, req, zone, testNames)
		verify(t, resp.Answer, k)
	}
	if s.Signed() != 2 {
		t.Errorf("signed %d RRsets for two different RRsets, want 2", s.Signed())
	}
}

func TestSignaturesAreMadeAgainOnceHalfTheirValidityHasPassed(t *testing.T) {
	now := time.Now()
	s := New(Config{Keys: []Key{testKey(t, true)}, Validity: 4 * time.Hour, Now: func() time.Time { return now }})
	inception := func() uint32 {
		req := query("web.default.svc.cluster.local.", dns.TypeA, true)
		resp := answerA(req, "10.96.0.1")
		s.Apply(resp, req, zone, testNames)
		return resp.Answer[1].(*dns.RRSIG).Inception
	}
	first := inception()
	now = now.Add(2*time.Hour - time.Second)
	if got := inception(); got != first || s.Signed() != 1 {
		t.Errorf("before half the validity: inception %d, %d signed; want %d, 1", got, s.Signed(), first)
	}
	now = now.Add(time.Second)
	if got := inception(); got == first || s.Signed() != 2 {
		t.Errorf("at half the validity: inception %d, %d signed; want a new signature", got, s.Signed())
	}
}

func TestAnswersWithoutTheDOBitAreLeftAsTheyAre(t *testing.T) {
	s := New(Config{Keys: []Key{testKey(t, true)}})
	for _, req := range []*dns.Msg{query("web.default.svc.cluster.local.", dns.TypeA, false), new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeA)} {
		resp := answerA(req, "10.96.0.1")
		before, _ := resp.Pack()
		s.Apply(resp, req, zone, testNames)
		if after, _ := resp.Pack(); !bytes.Equal(before, after) {
			t.Errorf("an answer without DO changed:\n%v", resp)
		}
	}
	nx := query("nosuch.svc.cluster.local.", dns.TypeA, false)
	resp := negative(nx, dns.RcodeNameError)
	s.Apply(resp, nx, zone, testNames)
	if len(resp.Ns) != 1 {
		t.Errorf("NXDOMAIN without DO got records: %v", resp.Ns)
	}
}

func TestTheApexAnswersItsDNSKEYsSignedByTheKSK(t *testing.T) {
	ksk, zsk := testKey(t, true), testKey(t, false)
	s := New(Config{Keys: []Key{ksk, zsk}})
	if tags := s.KeyTags(); !slices.Equal(s.Zones(), []string{zone}) || len(tags) != 1 ||
		!slices.Equal(tags[0], []uint16{ksk.DNSKEY.KeyTag(), zsk.DNSKEY.KeyTag()}) {
		t.Errorf("zones %v, key tags %v; want %s with %d and %d", s.Zones(), tags, zone, ksk.DNSKEY.KeyTag(), zsk.DNSKEY.KeyTag())
	}
	req := query(zone, dns.TypeDNSKEY, true)
	resp := negative(req, dns.RcodeSuccess) // the resolver knows no DNSKEY
	s.Apply(resp, req, zone, testNames)
	if len(resp.Ns) != 0 {
		t.Errorf("the DNSKEY answer has an authority section: %v", resp.Ns)
	}
	var tags []uint16
	for _, r := range resp.Answer {
		if sig, ok := r.(*dns.RRSIG); ok {
			tags = append(tags, sig.KeyTag)
		}
	}
	if len(resp.Answer) != 3 || !slices.Equal(tags, []uint16{ksk.DNSKEY.KeyTag()}) {
		t.Errorf("want 2 DNSKEYs signed by the KSK %d alone, got:\n%v", ksk.DNSKEY.KeyTag(), resp.Answer)
	}
	verify(t, resp.Answer, ksk)

	a := query("web.default.svc.cluster.local.", dns.TypeA, true)
	answer := answerA(a, "10.96.0.1")
	s.Apply(answer, a, zone, testNames)
	if sig := answer.Answer[1].(*dns.RRSIG); len(answer.Answer) != 2 || sig.KeyTag != zsk.DNSKEY.KeyTag() {
		t.Errorf("want the A RRset signed by the ZSK %d alone, got:\n%v", zsk.DNSKEY.KeyTag(), answer.Answer)
	}
	verify(t, answer.Answer, zsk)
}

func TestWithoutDOTheApexStillAnswersItsDNSKEYs(t *testing.T) {
	s := New(Config{Keys: []Key{testKey(t, true)}})
	req := query("Cluster.Local.", dns.TypeDNSKEY, false)
	resp := negative(req, dns.RcodeSuccess)
	s.Apply(resp, req, zone, testNames)
	if len(resp.Answer) != 1 || resp.Answer[0].Header().Rrtype != dns.TypeDNSKEY {
		t.Errorf("want one DNSKEY, got %v", resp.Answer)
	}
}

func TestNXDOMAINKeepsItsRcodeWithAnNSEC3Proof(t *testing.T) {
	k := testKey(t, true)
	s := New(Config{Keys: []Key{k}})
	qname := "nosuch.other.default.svc.cluster.local."
	req := query(qname, dns.TypeA, true)
	resp := negative(req, dns.RcodeNameError)
	s.Apply(resp, req, zone, testNames)
	if resp.Rcode != dns.RcodeNameError {
		t.Errorf("rcode %s, want NXDOMAIN", dns.RcodeToString[resp.Rcode])
	}
	verify(t, resp.Ns, k)
	nsec3s := nsec3sOf(resp.Ns)
	proves := func(what string, ok func(*dns.NSEC3) bool) {
		if !slices.ContainsFunc(nsec3s, ok) {
			t.Errorf("no NSEC3 %s in:\n%v", what, resp.Ns)
		}
	}
	proves("matching the closest encloser", func(n *dns.NSEC3) bool {
		return n.Match("default.svc.cluster.local.") && slices.Equal(n.TypeBitMap, []uint16{dns.TypeA, dns.TypeRRSIG})
	})
	proves("covering the next closer name", func(n *dns.NSEC3) bool { return n.Cover("other.default.svc.cluster.local.") })
	proves("covering the wildcard", func(n *dns.NSEC3) bool { return n.Cover("*.default.svc.cluster.local.") })
	if slices.ContainsFunc(nsec3s, func(n *dns.NSEC3) bool { return n.Cover("web.default.svc.cluster.local.") }) {
		t.Errorf("an NSEC3 covers a name that exists: %v", nsec3s)
	}
}

func TestNODATAIsAnNSEC3MatchingTheNameWithItsTypes(t *testing.T) {
	k := testKey(t, true)
	s := New(Config{Keys: []Key{k}})
	req := query("web.default.svc.cluster.local.", dns.TypeTXT, true)
	resp := negative(req, dns.RcodeSuccess)
	s.Apply(resp, req, zone, testNames)
	verify(t, resp.Ns, k)
	nsec3s := nsec3sOf(resp.Ns)
	if len(nsec3s) != 1 || !nsec3s[0].Match("web.default.svc.cluster.local.") ||
		!slices.Equal(nsec3s[0].TypeBitMap, []uint16{dns.TypeA, dns.TypeRRSIG}) {
		t.Errorf("want one NSEC3 matching the name with A RRSIG, got %v", nsec3s)
	}
}

func TestTheApexNSEC3HasTheDNSKEY(t *testing.T) {
	s := New(Config{Keys: []Key{testKey(t, true)}})
	req := query(zone, dns.TypeTXT, true)
	resp := negative(req, dns.RcodeSuccess)
	s.Apply(resp, req, zone, testNames)
	nsec3s := nsec3sOf(resp.Ns)
	want := []uint16{dns.TypeNS, dns.TypeSOA, dns.TypeRRSIG, dns.TypeDNSKEY}
	if len(nsec3s) != 1 || !slices.Equal(nsec3s[0].TypeBitMap, want) {
		t.Errorf("want the apex's NSEC3 with NS SOA RRSIG DNSKEY, got %v", nsec3s)
	}
}

func nsec3sOf(rrs []dns.RR) []*dns.NSEC3 {
	var out []*dns.NSEC3
	for _, r := range rrs {
		if n, ok := r.(*dns.NSEC3); ok {
			out = append(out, n)
		}
	}
	return out
}

func TestRecordsOutsideTheZoneAreNotSigned(t *testing.T) {
	s := New(Config{Keys: []Key{testKey(t, true)}})
	req := query("ext.default.svc.cluster.local.", dns.TypeA, true)
	resp := new(dns.Msg).SetReply(req)
	resp.Answer = []dns.RR{rr("ext.default.svc.cluster.local. 30 IN CNAME example.com."), rr("example.com. 30 IN A 192.0.2.1")}
	s.Apply(resp, req, zone, testNames)
	if len(resp.Answer) != 3 || resp.Answer[1].Header().Rrtype != dns.TypeRRSIG || resp.Answer[2].Header().Rrtype != dns.TypeA {
		t.Errorf("want the CNAME signed and example.com's A not, got:\n%v", resp.Answer)
	}
}

func TestTheSectionsOfTheResolversAnswerAreNotWrittenTo(t *testing.T) {
	s := New(Config{Keys: []Key{testKey(t, true)}})
	req := query("nosuch.svc.cluster.local.", dns.TypeA, true)
	shared := negative(req, dns.RcodeNameError).Ns
	shared = slices.Grow(shared, 10) // room an append would write into
	resp := new(dns.Msg).SetRcode(req, dns.RcodeNameError)
	resp.Ns = shared
	s.Apply(resp, req, zone, testNames)
	if extended := shared[:cap(shared)]; extended[1] != nil {
		t.Errorf("Apply wrote into the resolver's authority section: %v", extended[1])
	}
}

func TestReadKeyNamesWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		path string
		want string
	}{
		"a missing file": {filepath.Join(dir, "Kcluster.local.+013+00001"), "no such file"},
		"another algorithm": {writeKeyFiles(t, dir, "Kcluster.local.+015+00002",
			"cluster.local. 3600 IN DNSKEY 257 3 15 l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=", ""), "algorithm 15, want 13"},
		"a private key that does not parse": {writeKeyFiles(t, dir, "Kcluster.local.+013+00003",
			"cluster.local. 3600 IN DNSKEY 257 3 13 SbRaRuC5JvS1LjHx+O1fZ4CSSrsNxDBLrHx/0rdss4zITmB7tJQpds7MnPEwtGWVX+9E875WSiLUFRFzuaspAQ==",
			"Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: !!!\n"), "Kcluster.local.+013+00003.private"},
		"a file that is not a key": {writeKeyFiles(t, dir, "Kcluster.local.+013+00004", "cluster.local. 3600 IN A 10.0.0.1", ""), "not a DNSKEY"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ReadKey(c.path + ".key")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ReadKey: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// writeKeyFiles writes base.key and base.private into dir and returns the
// base path.
func writeKeyFiles(t *testing.T, dir, base, public, private string) string {
	t.Helper()
	path := filepath.Join(dir, base)
	if err := os.WriteFile(path+".key", []byte(public+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".private", []byte(private), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDSIsTheSHA256DigestOfTheKey(t *testing.T) {
	k := testKey(t, true)
	ds := DS(k)
	if ds.DigestType != dns.SHA256 || ds.KeyTag != k.DNSKEY.KeyTag() || ds.Algorithm != Algorithm || len(ds.Digest) != 64 {
		t.Errorf("DS %v", ds)
	}
}
