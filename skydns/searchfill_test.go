package skydns

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/resolver"
)

// podRecord is the key of the verified pod record of 127.0.0.1, the
// differential's client, in namespace ns.
func podRecord(ns string) string {
	return contract.Key(contract.DefaultPrefix, "127-0-0-1."+ns+".pod.cluster.local.")
}

// newSearchDifferential is the differential with --autopath and verified
// pod records, its client a pod of namespace default.
func newSearchDifferential(t *testing.T) *differential {
	records := fuzzRecords()
	records[podRecord("default")] = `{"host":"127.0.0.1"}`
	return newDifferentialWith(t, resolver.Config{Zones: []string{"cluster.local."}, Pods: resolver.PodsVerified}, records, true)
}

// searchQuery is a plain query for name and qtype with RD set, EDNS as
// edns says (0: none).
func searchQuery(name string, qtype uint16, edns uint16) fuzzQuery {
	m := new(dns.Msg).SetQuestion(name, qtype)
	if edns > 0 {
		m.SetEdns0(edns, false)
	}
	packed, err := m.Pack()
	if err != nil {
		panic(err)
	}
	return fuzzQuery{packed: packed, plain: true, sure: true}
}

// served asks q twice (the first may fill the forwarder's cache through
// the ordinary path), checking both answers against the ordinary path,
// and reports whether the fast path answered the second over UDP.
func (d *differential) servedTwice(t *testing.T, q fuzzQuery) bool {
	t.Helper()
	d.check(t, q)
	before := d.served
	d.check(t, q)
	return d.served-before == 2 // UDP and TCP
}

// putRecord applies one record (deleted when value is "") at key as the
// next revision.
func (d *differential) putRecord(key, value string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applyRecord(key, value)
}

func TestFastPathAutopathMatchesTheOrdinaryPath(t *testing.T) {
	d := newSearchDifferential(t)
	for _, tc := range []struct {
		name  string
		qname string
		qtype uint16
	}{
		{"an external name, behind a CNAME, its TTLs aged", "example.com.default.svc.cluster.local.", dns.TypeA},
		{"an external name's glue", "example.com.default.svc.cluster.local.", dns.TypeMX},
		{"an external name without data (NODATA)", "example.com.default.svc.cluster.local.", dns.TypeAAAA},
		{"a service of another namespace", "web.default.default.svc.cluster.local.", dns.TypeA},
		{"a service's SRV with glue", "_http._tcp.web.default.default.svc.cluster.local.", dns.TypeSRV},
		{"a name the zones deny at every step but the last", "nope.default.default.svc.cluster.local.", dns.TypeA},
	} {
		t.Run(tc.name+" is the fast path's, as the ordinary path answers it", func(t *testing.T) {
			for _, edns := range []uint16{0, 1232} {
				if !d.servedTwice(t, searchQuery(tc.qname, tc.qtype, edns)) {
					t.Fatalf("EDNS %d: the fast path did not answer the second query", edns)
				}
			}
		})
	}
	t.Run("a name the forwarder denies stays on the ordinary path, as it answers it", func(t *testing.T) {
		d.servedTwice(t, searchQuery("example.com.default.svc.cluster.local.", dns.TypeTXT, 1232))
	})
	t.Run("a client that is not a pod of the namespace gets NXDOMAIN from the fast path", func(t *testing.T) {
		q := searchQuery("example.com.other.svc.cluster.local.", dns.TypeA, 1232)
		if !d.servedTwice(t, q) {
			t.Fatal("not answered by the fast path")
		}
		if got := d.ordinaryRcode(t, q); got != dns.RcodeNameError {
			t.Fatalf("rcode %s, want NXDOMAIN", dns.RcodeToString[got])
		}
	})
	t.Run("a record on the search path is seen at once", func(t *testing.T) {
		q := searchQuery("example.com.default.svc.cluster.local.", dns.TypeA, 1232)
		d.putRecord(contract.Key(contract.DefaultPrefix, "example.com.svc.cluster.local.")+"/x", `{"host":"10.9.0.1"}`)
		d.check(t, q)
		if got := d.ordinaryAnswer(t, q); len(got.Answer) != 2 || got.Answer[1].(*dns.A).A.String() != "10.9.0.1" {
			t.Fatalf("want the CNAME and 10.9.0.1 from the zone, got\n%v", got)
		}
		d.putRecord(contract.Key(contract.DefaultPrefix, "example.com.svc.cluster.local.")+"/x", "")
		d.check(t, q)
	})
	t.Run("a pod moving namespace is seen at once", func(t *testing.T) {
		moved := searchQuery("example.com.default.svc.cluster.local.", dns.TypeA, 1232)
		d.check(t, moved)
		d.putRecord(podRecord("default"), "")
		d.putRecord(podRecord("shop"), `{"host":"127.0.0.1"}`)
		d.check(t, moved)
		if got := d.ordinaryRcode(t, moved); got != dns.RcodeNameError {
			t.Fatalf("the old namespace's search: rcode %s, want NXDOMAIN", dns.RcodeToString[got])
		}
		if !d.servedTwice(t, searchQuery("example.com.shop.svc.cluster.local.", dns.TypeA, 1232)) {
			t.Fatal("the new namespace's search is not the fast path's")
		}
	})
}

// ordinaryAnswer is the ordinary path's answer to q over UDP.
func (d *differential) ordinaryAnswer(t *testing.T, q fuzzQuery) *dns.Msg {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	_, resp := d.ordinaryOver(t, "udp", q.packed)
	return resp
}

func (d *differential) ordinaryRcode(t *testing.T, q fuzzQuery) int {
	return d.ordinaryAnswer(t, q).Rcode
}
