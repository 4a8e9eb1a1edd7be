package clusterset

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// versionTTL is the TTL of dns-version's TXT record, the specification's
// example.
const versionTTL = 28800

// InZone reports whether name is clusterset.local or below it.
func InZone(name string) bool { return dns.IsSubDomain(cs.Zone, strings.ToLower(name)) }

// Answer answers from v req's question (in the zone) with records of TTL ttl:
// NXDOMAIN for a name that does not exist, NODATA for a name without
// records of the type, both with the zone's SOA.
func Answer(v *cs.View, req *dns.Msg, ttl uint32) *dns.Msg {
	m := new(dns.Msg).SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 0 {
		return m.SetRcode(req, dns.RcodeFormatError)
	}
	q := req.Question[0]
	labels := contract.Labels(strings.TrimSuffix(strings.ToLower(q.Name), cs.Zone))
	a := answerer{view: v, qname: q.Name, qtype: q.Qtype, ttl: ttl}
	exists := a.lookup(labels)
	m.Answer = a.rrs
	if !exists {
		m.Rcode = dns.RcodeNameError
	}
	if len(m.Answer) == 0 {
		m.Ns = []dns.RR{soa(v, ttl)}
	}
	return m
}

// answerer gathers the records of one question.
type answerer struct {
	view  *cs.View
	qname string
	qtype uint16
	ttl   uint32
	rrs   []dns.RR
}

// lookup adds the records of the name whose labels (below the zone) are
// given, and says whether the name exists.
func (a *answerer) lookup(labels []string) bool {
	n := len(labels)
	switch {
	case n == 0:
		if a.qtype == dns.TypeSOA {
			a.rrs = append(a.rrs, soa(a.view, a.ttl))
		}
		return true
	case n == 1 && labels[0] == "dns-version":
		a.txt(cs.DNSVersion)
		return true
	case labels[n-1] != "svc":
		return false
	case n == 1:
		return a.view.Len() > 0
	case n == 2:
		return a.view.HasNamespace(labels[0])
	}
	svc := a.view.Service(cs.ServiceName{Namespace: labels[n-2], Name: labels[n-3]})
	if svc == nil || !svc.Exists() {
		return false
	}
	return a.lookupService(svc, labels[:n-3], strings.Join(labels[n-3:], ".")+"."+cs.Zone)
}

// lookupService answers the names of one Service: the Service itself,
// _<proto> (empty), _<port>._<proto>, <hostname>.<cluster> (headless).
// <cluster> alone must not exist.
func (a *answerer) lookupService(svc *cs.Service, rest []string, fqdn string) bool {
	switch {
	case len(rest) == 0:
		a.service(svc, fqdn)
		return true
	case len(rest) == 1 && isService(rest[0]):
		return slices.ContainsFunc(svc.Ports, func(p cs.Port) bool { return p.Name != "" && "_"+strings.ToLower(p.Protocol) == rest[0] })
	case len(rest) == 2 && isService(rest[0]) && isService(rest[1]):
		return a.srv(svc, fqdn, rest[0][1:], rest[1][1:])
	case len(rest) == 2 && svc.Type == cs.Headless:
		return a.endpoint(svc, rest[1], rest[0])
	}
	return false
}

func isService(label string) bool { return strings.HasPrefix(label, "_") && len(label) > 1 }

// service answers the Service's own name: its clusterset IPs or every ready
// endpoint, and for SRV every named port.
func (a *answerer) service(svc *cs.Service, fqdn string) {
	switch a.qtype {
	case dns.TypeA, dns.TypeAAAA:
		if svc.Type == cs.Headless {
			for _, m := range svc.Members {
				for _, ep := range m.Endpoints {
					a.addresses(ep.Addresses)
				}
			}
			return
		}
		a.addresses(svc.IPs)
	case dns.TypeSRV:
		a.srv(svc, fqdn, "", "")
	}
}

// srv adds the SRV records of the named ports matching name and proto ("" matches
// all) and says whether any port matched.
func (a *answerer) srv(svc *cs.Service, fqdn, name, proto string) bool {
	matches := func(p cs.Port) bool {
		return p.Name != "" && (name == "" || p.Name == name) && (proto == "" || strings.ToLower(p.Protocol) == proto)
	}
	found := false
	if svc.Type != cs.Headless {
		for _, p := range svc.Ports {
			if matches(p) {
				found = true
				a.addSRV(fqdn, p.Port)
			}
		}
		return found
	}
	for _, m := range svc.Members {
		for _, p := range m.Ports {
			if !matches(p) || !slices.Contains(svc.Ports, p) {
				continue // a port that lost a conflict serves no SRV
			}
			found = true
			for _, ep := range m.Endpoints {
				a.addSRV(ep.Hostname+"."+m.Cluster+"."+fqdn, p.Port)
			}
		}
	}
	return found
}

// endpoint answers <hostname>.<cluster>: that endpoint's addresses.
func (a *answerer) endpoint(svc *cs.Service, cluster, hostname string) bool {
	for _, m := range svc.Members {
		if m.Cluster != cluster {
			continue
		}
		for _, ep := range m.Endpoints {
			if ep.Hostname == hostname {
				a.addresses(ep.Addresses)
				return true
			}
		}
	}
	return false
}

func (a *answerer) addresses(addrs []netip.Addr) {
	for _, addr := range addrs {
		switch {
		case a.qtype == dns.TypeA && addr.Is4():
			a.rrs = append(a.rrs, &dns.A{Hdr: a.header(dns.TypeA, a.ttl), A: addr.AsSlice()})
		case a.qtype == dns.TypeAAAA && addr.Is6():
			a.rrs = append(a.rrs, &dns.AAAA{Hdr: a.header(dns.TypeAAAA, a.ttl), AAAA: addr.AsSlice()})
		}
	}
}

// addSRV adds one SRV record unless the same target and port are there.
func (a *answerer) addSRV(target string, port int) {
	if a.qtype != dns.TypeSRV {
		return
	}
	for _, rr := range a.rrs {
		if s := rr.(*dns.SRV); s.Target == target && int(s.Port) == port {
			return
		}
	}
	a.rrs = append(a.rrs, &dns.SRV{Hdr: a.header(dns.TypeSRV, a.ttl), Priority: 0, Weight: 1, Port: uint16(port), Target: target})
}

func (a *answerer) txt(text string) {
	if a.qtype == dns.TypeTXT {
		a.rrs = append(a.rrs, &dns.TXT{Hdr: a.header(dns.TypeTXT, versionTTL), Txt: []string{text}})
	}
}

func (a *answerer) header(rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: a.qname, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
}

// soa is the zone's SOA record; its serial is the view's etcd revision.
func soa(v *cs.View, ttl uint32) dns.RR {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: cs.Zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
		Ns:  "ns.dns." + cs.Zone, Mbox: "hostmaster." + cs.Zone,
		Serial: uint32(v.Revision()), Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: ttl,
	}
}
