package kube2sky

import (
	"net/netip"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

const nsKey = "/skydns/local/cluster/dns/ns/"

func TestTheDNSServiceIsTheZonesNameServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.etcd.Put(t, nsKey+"manual", `{"host":"192.0.2.53"}`)
	r := h.start("a")
	h.waitLeader(r)
	h.create(service("kube-system", "kube-dns", []string{"10.96.0.10", "fd00:10:96::a"}))
	h.waitContents(append(clusterIPLines("kube-system", "kube-dns", "10.96.0.10", "fd00:10:96::a"),
		nsKey+`manual {"host":"192.0.2.53"}`,
		nsKey+"ns1 "+v("10.96.0.10"),
		nsKey+"ns2 "+v("fd00:10:96::a"),
	)...)

	h.deleteService("kube-system", "kube-dns")
	h.waitContents(nsKey + `manual {"host":"192.0.2.53"}`)
}

func TestWithoutADNSServiceNoNameServerIsWrittenAndOldOnesGo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.etcd.Put(t, nsKey+"ns1", v("10.96.0.10")) // written when --dns-service was set
	r := h.start("a", func(c *Config) { c.DNSService = "" })
	h.waitLeader(r)
	h.create(service("kube-system", "kube-dns", []string{"10.96.0.10"}))
	h.waitContents(clusterIPLines("kube-system", "kube-dns", "10.96.0.10")...)
}

// clusterIPLines are the records (as dump lists them) of a Service with
// cluster IPs and no ports: an address and a PTR per IP.
func clusterIPLines(ns, name string, ips ...string) []string {
	fqdn := name + "." + ns + ".svc.cluster.local."
	var out []string
	for _, ip := range ips {
		out = append(out, svcKey+ns+"/"+name+"/"+records.HashLabel(ip, 0)+" "+v(ip),
			contract.ReverseKey("/skydns", netip.MustParseAddr(ip))+" "+v(fqdn))
	}
	return out
}
