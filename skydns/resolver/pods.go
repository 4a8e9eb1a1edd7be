package resolver

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// PodMode says how names under pod.<cluster zone> are answered, as
// kube-dns's and CoreDNS's "pods" option does.
type PodMode string

// The pod modes.
const (
	// PodsDisabled answers NXDOMAIN for every name under pod.<zone>, even
	// when records exist there.
	PodsDisabled PodMode = "disabled"
	// PodsInsecure synthesizes the address of <a-b-c-d>.<ns>.pod.<zone>
	// (IPv6: the address with ":" as "-", fd00--1) for any namespace,
	// without looking at the snapshot.
	PodsInsecure PodMode = "insecure"
	// PodsVerified answers <a-b-c-d>.<ns>.pod.<zone> only from the record
	// at that exact key, which kube2sky writes for each running pod.
	PodsVerified PodMode = "verified"
)

// ParsePodMode returns the mode named s; "" is PodsDisabled.
func ParsePodMode(s string) (PodMode, error) {
	switch m := PodMode(s); m {
	case "":
		return PodsDisabled, nil
	case PodsDisabled, PodsInsecure, PodsVerified:
		return m, nil
	}
	return "", fmt.Errorf("pod records %q: must be disabled, insecure or verified", s)
}

// podName is what a name is under pod.<zone>.
type podName int

const (
	notPod    podName = iota // not under pod.<zone>
	podBranch                // pod.<zone> or <ns>.pod.<zone>: an empty non-terminal
	podLeaf                  // <label>.<ns>.pod.<zone>
	podOther                 // deeper, or an empty label: never exists
)

// classifyPod says what lname (lower case, fully qualified) is under
// pod.<zone>, and for a leaf returns its first label. The names of a
// namespace outside PodNamespaces never exist.
func (r *Resolver) classifyPod(lname string) (podName, string) {
	if r.podZone == "" || !isSubdomain(r.podZone, lname) {
		return notPod, ""
	}
	rel := strings.TrimSuffix(lname[:len(lname)-len(r.podZone)], ".")
	switch strings.Count(rel, ".") {
	case 0: // pod.<zone> itself, or <ns>.pod.<zone>
		if rel != "" && !r.podNamespace(rel) {
			return podOther, ""
		}
		return podBranch, ""
	case 1:
		label, ns, _ := strings.Cut(rel, ".")
		if label == "" || ns == "" || !r.podNamespace(ns) {
			return podOther, ""
		}
		return podLeaf, label
	}
	return podOther, ""
}

// podNamespace reports whether ns's pod names may exist.
func (r *Resolver) podNamespace(ns string) bool {
	return r.podNamespaces == nil || slices.Contains(r.podNamespaces, ns)
}

// podAddr returns the address a pod label spells: a-b-c-d for IPv4, the
// IPv6 text with every ":" written "-" (fd00--1) for IPv6. Anything else,
// non-canonical IPv4 (leading zeros) included, is not an address.
func podAddr(label string) (netip.Addr, bool) {
	if strings.Count(label, "-") == 3 && !strings.Contains(label, "--") {
		a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", "."))
		return a, err == nil && a.Is4()
	}
	a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ":"))
	return a, err == nil && a.Is6() && a.Zone() == "" && !a.Is4In6()
}

// podExists reports whether a name under pod.<zone> exists.
func (res *resolution) podExists(kind podName, label, lname string) bool {
	switch {
	case res.r.pods == PodsDisabled || kind == podOther:
		return false
	case res.r.pods == PodsInsecure && kind == podBranch:
		return true
	case res.r.pods == PodsInsecure:
		_, ok := podAddr(label)
		return ok
	case kind == podBranch:
		return res.snap.Exists(lname)
	}
	return len(res.podRecords(lname)) > 0
}

// podFollow appends the qtype (A or AAAA) address of a pod name, owned by
// owner: synthesized in insecure mode, from the name's exact key in
// verified mode. Pod names have no other data.
func (res *resolution) podFollow(owner, lname string, kind podName, label string, qtype uint16, out []dns.RR) []dns.RR {
	if kind != podLeaf || (qtype != dns.TypeA && qtype != dns.TypeAAAA) {
		return out
	}
	switch res.r.pods {
	case PodsInsecure:
		if addr, ok := podAddr(label); ok && addr.Is4() == (qtype == dns.TypeA) {
			out = append(out, podRR(res.hdr(owner, qtype, res.r.ttl), addr))
		}
	case PodsVerified:
		es := res.podRecords(lname)
		var seen leafSet
		for i := range es {
			if e := &es[i]; leafMatches(e, qtype) && seen.add(e) {
				out = append(out, res.leaf(owner, e, qtype))
			}
		}
	}
	return out
}

func podRR(h dns.RR_Header, addr netip.Addr) dns.RR {
	if addr.Is4() {
		return &dns.A{Hdr: h, A: addr.AsSlice()}
	}
	return &dns.AAAA{Hdr: h, AAAA: addr.AsSlice()}
}

// podRecords returns the address records at a pod name's own key. A "*"
// or "any" label is taken literally ("any" is a valid namespace).
func (res *resolution) podRecords(lname string) []snapshot.Entry {
	es := res.snap.Exact(lname)
	if !hasWildcardLabel(lname) {
		return addresses(es)
	}
	key := contract.Key(res.r.prefix, lname)
	kept := es[:0]
	for _, e := range es {
		if e.Key() == key {
			kept = append(kept, e)
		}
	}
	return addresses(kept)
}

func addresses(es []snapshot.Entry) []snapshot.Entry {
	kept := es[:0]
	for i := range es {
		if e := es[i]; isAddress(&e) {
			kept = append(kept, e)
		}
	}
	return kept
}

// isPod reports whether the question's name is under pod.<zone>.
func (res *resolution) isPod() bool {
	kind, _ := res.r.classifyPod(res.lname)
	return kind != notPod
}
