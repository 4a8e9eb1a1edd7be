package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestTheZoneNameServerIsTheDNSService checks that the zone apex's NS is
// not lame: kube2sky writes the kube-dns Service's cluster IP (its default
// --dns-service, kube-system/kube-dns) as the zone's name server, and
// without that Service skydns answers with its own listen address.
func TestTheZoneNameServerIsTheDNSService(t *testing.T) {
	s := startStack(t, stackOptions{})
	dnsAddr := s.skydns.DNSAddr
	listenIP := strings.Split(dnsAddr, ":")[0]

	t.Run("without the Service: ns.dns.<zone> is skydns's listen address", func(t *testing.T) {
		waitNameServers(t, dnsAddr, "ns.dns.cluster.local. "+listenIP)
	})
	t.Run("the kube-dns Service's cluster IP is the name server ns1", func(t *testing.T) {
		ip := createService(t, s.kube, "kube-system", "kube-dns", "10.96.0.10")
		waitNameServers(t, dnsAddr, "ns1.ns.dns.cluster.local. "+ip)
		waitAnswer(t, dnsAddr, "ns.dns.cluster.local.", dns.TypeA, ip) // the SOA's primary server
		resp, err := s.dnsEtcd.Client().Get(t.Context(), "/skydns/local/cluster/dns/ns/ns1")
		if err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"owner":"kube2sky.cluster.local"`) {
			t.Errorf("the ns1 record in etcd: %v %v; want one owned by kube2sky", resp, err)
		}
	})
	t.Run("the Service deleted: its record goes, the listen address is back", func(t *testing.T) {
		deleteService(t, s.kube, "kube-system", "kube-dns")
		waitNameServers(t, dnsAddr, "ns.dns.cluster.local. "+listenIP)
	})
}

// waitNameServers polls the apex NS of cluster.local over UDP and TCP until
// each NS target, with the address its glue gives, is exactly want
// ("<target> <address>").
func waitNameServers(t *testing.T, addr string, want ...string) {
	t.Helper()
	polltest.Within(t, hostsTimeout, "cluster.local. NS", func() error {
		for _, transport := range harness.Transports {
			reply, err := harness.Query(addr, transport, "cluster.local.", dns.TypeNS)
			if err != nil {
				return err
			}
			if got := nameServers(reply); reply.Rcode != dns.RcodeSuccess || !slices.Equal(got, want) {
				return fmt.Errorf("over %s: %s %q, want %q", transport, dns.RcodeToString[reply.Rcode], got, want)
			}
		}
		return nil
	})
}

// nameServers pairs each NS target of a reply with its glue addresses.
func nameServers(reply *dns.Msg) []string {
	var out []string
	for _, rr := range reply.Answer {
		ns, ok := rr.(*dns.NS)
		if !ok {
			continue
		}
		for _, glue := range reply.Extra {
			if strings.EqualFold(glue.Header().Name, ns.Ns) && glue.Header().Rrtype != dns.TypeOPT {
				out = append(out, ns.Ns+" "+rdata([]dns.RR{glue})[0])
			}
		}
	}
	slices.Sort(out)
	return out
}
