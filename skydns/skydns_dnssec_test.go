package skydns

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// skydnsCase is one of the DNSSEC cases of SkyDNS's own TestDNS
// (skynetservices/skydns server/server_test.go), asked with the DO bit of
// a daemon serving SkyDNS's test zone skydns.test. with its records.
type skydnsCase struct {
	name  string
	qname string
	qtype uint16
	rcode int
	// check says how the answer differs from SkyDNS's, "" when it does not.
	check func(z *signedZone, resp *dns.Msg) string
}

// SkyDNS's white lies are ours: an NSEC3 hash, minus and plus one, with
// no salt and no extra iterations, so its expected owners and next names
// hold here too.
var skydnsDNSSECCases = []skydnsCase{
	{"DNSKEY Test", "skydns.test.", dns.TypeDNSKEY, dns.RcodeSuccess, func(z *signedZone, resp *dns.Msg) string {
		return sectionIs(resp.Answer, "DNSKEY", "RRSIG DNSKEY 13 2 3600")
	}},
	{"Signed Response Test", "104.server1.development.region1.skydns.test.", dns.TypeSRV, dns.RcodeSuccess, signedSRV},
	{"Signed Response Test, ask twice to check cache", "104.server1.development.region1.skydns.test.", dns.TypeSRV, dns.RcodeSuccess, signedSRV},
	{"NXDOMAIN Test", "doesnotexist.skydns.test.", dns.TypeA, dns.RcodeNameError, nxdomainProof},
	{"NXDOMAIN Test, cache test", "doesnotexist.skydns.test.", dns.TypeA, dns.RcodeNameError, nxdomainProof},
	{"NODATA Test", "104.server1.development.region1.skydns.test.", dns.TypeTXT, dns.RcodeSuccess, func(z *signedZone, resp *dns.Msg) string {
		if msg := sectionIs(resp.Ns, "SOA", "RRSIG SOA 13 2", "NSEC3 1 0 0 - E76CLEL5E7TQHRTFLTBVH0645NEKFJVA", "RRSIG NSEC3 13 3"); msg != "" {
			return msg
		}
		return nsec3Owner(resp.Ns, "e76clel5e7tqhrtfltbvh0645nekfjv9.skydns.test.", dns.TypeA)
	}},
	{"TTL Test (TestDNSTtlRR, on its DNSSEC server)", "ttl.skydns.test.", dns.TypeA, dns.RcodeSuccess, func(z *signedZone, resp *dns.Msg) string {
		if msg := sectionIs(resp.Answer, "A 10.0.0.2", "RRSIG A 13 3 360"); msg != "" {
			return msg
		}
		if ttl := resp.Answer[0].Header().Ttl; ttl != 360 {
			return fmt.Sprintf("TTL %d, want 360", ttl)
		}
		return ""
	}},
}

func signedSRV(z *signedZone, resp *dns.Msg) string {
	if msg := sectionIs(resp.Answer, "SRV 10 100 0 104.server1.development.region1.skydns.test.", "RRSIG SRV 13 6"); msg != "" {
		return msg
	}
	return sectionIs(resp.Extra, "A 10.0.0.1", "RRSIG A 13 6", "OPT")
}

func nxdomainProof(z *signedZone, resp *dns.Msg) string {
	msg := sectionIs(resp.Ns, "SOA", "RRSIG SOA 13 2",
		"NSEC3 1 0 0 - 44OHAQ2NJB0IDNVOLT9GGTHVSK1E1UVA", "RRSIG NSEC3 13 3",
		"NSEC3 1 0 0 - AH4V7G5QOIRI26ARMRB3BLDQI1SNG6A3", "RRSIG NSEC3 13 3",
		"NSEC3 1 0 0 - LKSD858F4CLDL7EMDORD75K5JEKS49PA", "RRSIG NSEC3 13 3")
	if msg != "" {
		return msg
	}
	return nsec3Owner(resp.Ns, "ah4v7g5qoiri26armrb3bldqi1sng6a2.skydns.test.", dns.TypeSOA)
}

// sectionIs describes how section differs from records whose text
// (without the owner, TTL and class) starts with each of want, in any
// order.
func sectionIs(section []dns.RR, want ...string) string {
	var got []string
	for _, rr := range section {
		got = append(got, strings.TrimSpace(strings.TrimPrefix(rr.String(), rr.Header().String())))
		if rr.Header().Rrtype == dns.TypeOPT {
			got[len(got)-1] = "OPT"
		} else {
			got[len(got)-1] = dns.TypeToString[rr.Header().Rrtype] + " " + got[len(got)-1]
		}
	}
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.IndexFunc(left, func(g string) bool { return strings.HasPrefix(g, w) })
		if i < 0 {
			return "no " + w + " in " + strings.Join(got, " | ")
		}
		left = slices.Delete(left, i, i+1)
	}
	if len(left) > 0 {
		return "more than wanted: " + strings.Join(left, " | ")
	}
	return ""
}

// nsec3Owner says whether section has an NSEC3 owned by owner whose
// bitmap has has.
func nsec3Owner(section []dns.RR, owner string, has uint16) string {
	for _, rr := range section {
		if n, ok := rr.(*dns.NSEC3); ok && n.Hdr.Name == owner && slices.Contains(n.TypeBitMap, has) {
			return ""
		}
	}
	return "no NSEC3 " + owner + " with " + dns.TypeToString[has]
}

func TestSkyDNSsDNSSECCasesPass(t *testing.T) {
	z := &signedZone{etcd: etcdtest.Start(t), dir: t.TempDir(), anchors: make(map[string]*dns.DNSKEY)}
	for name, value := range map[string]string{
		"104.server1.development.region1.skydns.test.": `{"host":"10.0.0.1"}`,
		"100.server1.development.region1.skydns.test.": `{"host":"server1","port":8080}`,
		"a.ipaddr.skydns.test.":                        `{"host":"172.16.1.1"}`,
		"ttl.skydns.test.":                             `{"host":"10.0.0.2","ttl":360}`,
	} {
		z.etcd.Put(t, contract.Key(contract.DefaultPrefix, name), value)
	}
	cfg := testConfig(z.etcd.ClientURL())
	cfg.Zones = []string{"skydns.test."}
	cfg.DNSSECKeys = []string{z.newKey(t, "skydns.test.")}
	z.d = startDaemon(t, cfg)
	z.waitFor(t, "104.server1.development.region1.skydns.test.", dns.TypeA)
	for _, c := range skydnsDNSSECCases {
		t.Run(c.name, func(t *testing.T) {
			resp := askDO(t, z.d.DNSAddr(), c.qname, c.qtype)
			if resp.Rcode != c.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[resp.Rcode], dns.RcodeToString[c.rcode])
			}
			if msg := c.check(z, resp); msg != "" {
				t.Errorf("%s\n%v", msg, resp)
			}
			z.verify(t, resp)
		})
	}
}
