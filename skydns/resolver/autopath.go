package resolver

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// SearchPath reports whether a question for qname from client is a pod's
// first search-path query, as a pod's resolv.conf (search <ns>.svc.<zone>
// svc.<zone> <zone>, ndots:5) makes it: qname is <base>.<ns>.svc.<first
// zone> and client is a pod of namespace ns, which only verified pod
// records tell (the record <client>.<ns>.pod.<zone> holds client's
// address). It returns the names the pod would ask next, in order:
// <base>.svc.<zone>., <base>.<zone>. and <base>. itself.
func (r *Resolver) SearchPath(snap *snapshot.Snapshot, qname string, client netip.Addr) ([]string, bool) {
	if r.pods != PodsVerified || r.podZone == "" {
		return nil, false
	}
	zone := strings.TrimPrefix(r.podZone, "pod.")
	base, ns, ok := splitSearchName(lowerFqdn(qname), "svc."+zone)
	if !ok || !r.isPodOf(snap, client.Unmap(), ns, zone) {
		return nil, false
	}
	return []string{base + ".svc." + zone, base + "." + zone, base + "."}, true
}

// SearchNamespace reports whether SearchPath may hold for qname from some
// client, and for the pods of which namespace: the answer to qname
// depends on who asks.
func (r *Resolver) SearchNamespace(qname string) (ns string, ok bool) {
	if r.pods != PodsVerified || r.podZone == "" {
		return "", false
	}
	_, ns, ok = splitSearchName(lowerFqdn(qname), "svc."+strings.TrimPrefix(r.podZone, "pod."))
	return ns, ok
}

// PodOf reports whether client is a pod of namespace ns, as SearchPath
// checks it.
func (r *Resolver) PodOf(snap *snapshot.Snapshot, client netip.Addr, ns string) bool {
	return r.pods == PodsVerified && r.podZone != "" && r.isPodOf(snap, client.Unmap(), ns, strings.TrimPrefix(r.podZone, "pod."))
}

// splitSearchName splits <base>.<ns>.<domain> into base and ns.
func splitSearchName(lname, domain string) (base, ns string, ok bool) {
	rest, found := strings.CutSuffix(lname, "."+domain)
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], !contract.IsWildcard(rest[i+1:])
}

// isPodOf reports whether the verified pod record of addr lives in
// namespace ns.
func (r *Resolver) isPodOf(snap *snapshot.Snapshot, addr netip.Addr, ns, zone string) bool {
	if !addr.IsValid() {
		return false
	}
	label := strings.ReplaceAll(addr.String(), ".", "-")
	if addr.Is6() {
		label = strings.ReplaceAll(addr.String(), ":", "-")
	}
	for _, e := range snap.Exact(label + "." + ns + ".pod." + zone) {
		if ip, ok := netip.AddrFromSlice(e.IP); ok && ip.Unmap() == addr {
			return true
		}
	}
	return false
}

// Autopath makes step, the answer to the name a pod's search path reached,
// the answer to req: req's question, and a CNAME from req's name to the
// step's name first in the answer section.
func (r *Resolver) Autopath(req, step *dns.Msg) *dns.Msg {
	cname := &dns.CNAME{
		Hdr:    dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: r.ttl},
		Target: step.Question[0].Name,
	}
	step.Id, step.Question = req.Id, req.Question
	step.Answer = append([]dns.RR{cname}, step.Answer...)
	return step
}
