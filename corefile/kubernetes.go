package corefile

import (
	"strconv"
	"strings"

	"github.com/coredns/caddy/caddyfile"

	"github.com/kubesky/kubesky/contract"
)

// reverseZones are always answered by skydns, from kube2sky's PTR records.
var reverseZones = []string{"in-addr.arpa.", "ip6.arpa."}

// clusterZone is the first zone of the first kubernetes plugin that is not
// a reverse zone, or opts.ClusterZone.
func clusterZone(blocks []caddyfile.ServerBlock, opts Options) string {
	for _, b := range blocks {
		for _, u := range uses("", b.Tokens["kubernetes"]) {
			zones := u.args
			if len(zones) == 0 {
				zones = b.Keys
			}
			for _, z := range zones {
				if z, _ := normalZone(stripPort(z)); z != "" && z != "." && !isReverse(z) {
					return z
				}
			}
		}
	}
	z, _ := normalZone(opts.ClusterZone)
	return z
}

// stripPort drops a server key's scheme and port.
func stripPort(key string) string {
	if _, after, ok := strings.Cut(key, "://"); ok {
		key = after
	}
	zone, _, _ := strings.Cut(key, ":")
	return zone
}

// isReverse reports whether zone is at or under a reverse zone.
func isReverse(zone string) bool {
	for _, r := range reverseZones {
		if zone == r || strings.HasSuffix(zone, "."+r) {
			return true
		}
	}
	return false
}

// isOwn reports whether skydns answers zone itself: the cluster domain,
// the reverse zones, or a zone under one of them.
func (t *translator) isOwn(zone string) bool {
	return zone == t.cluster || strings.HasSuffix(zone, "."+t.cluster) || isReverse(zone)
}

func (t *translator) kubernetes(s server, u use) {
	zones := u.args
	if len(zones) == 0 {
		zones = s.zones
	}
	for _, z := range zones {
		zone, why := normalZone(z)
		switch {
		case why != "":
			t.refuse(u.at(), z+": "+why)
			return
		case zone != t.cluster && !isReverse(zone):
			t.refuse(u.at(), "kube2sky writes one cluster domain, "+t.cluster+", not also "+zone)
			return
		}
	}
	t.use(u.at(), "kube2sky writes the Services' records of "+t.cluster+" into etcd and skydns answers them, and their PTRs, SRV with priority 0 as CoreDNS",
		sky("zone", t.cluster), sky("priority", "0"), k2s("zone", strings.TrimSuffix(t.cluster, ".")))
	var namespaces *option
	for _, o := range u.options {
		t.seen["kubernetes "+o.name] = true
		if o.name == "namespaces" {
			namespaces = &o
			continue
		}
		t.kubernetesOption(o)
	}
	if namespaces != nil {
		t.namespaces(namespaces.at("kubernetes"), namespaces.args, podsMode(u.options))
	}
}

// podsMode is the kubernetes plugin's pods option: disabled when absent.
func podsMode(options []option) string {
	for _, o := range options {
		if o.name == "pods" && len(o.args) == 1 {
			return o.args[0]
		}
	}
	return "disabled"
}

// namespaces is the namespaces option, read once pods is known: kube2sky
// leaves out the other namespaces' Services, and skydns their pod names.
func (t *translator) namespaces(a at, args []string, pods string) {
	if len(args) == 0 {
		t.refuse(a, "namespaces takes one namespace or more")
		return
	}
	for _, ns := range args {
		if !contract.ValidLabel(ns) {
			t.refuse(a, ns+" is not a namespace name")
			return
		}
	}
	list := strings.Join(args, ",")
	if pods == "disabled" {
		t.use(a, "only these namespaces' Services have records; the others' names are NXDOMAIN", k2s("namespaces", list))
		return
	}
	t.use(a, "only these namespaces' Services and pods have names; the others' are NXDOMAIN", k2s("namespaces", list), sky("pod-namespaces", list))
}

// kubernetesIgnored are the kubernetes plugin's options that change
// nothing kubesky answers, with why.
var kubernetesIgnored = map[string]string{
	"endpoint":        "kube2sky reaches the API server with its --kubeconfig, or in-cluster",
	"kubeconfig":      "kube2sky reaches the API server with its --kubeconfig, or in-cluster",
	"tls":             "kube2sky reaches the API server with its --kubeconfig, or in-cluster",
	"upstream":        "CoreDNS ignores it too (deprecated)",
	"startup_timeout": "skydns answers from etcd; kube2sky writes once its informers have synced",
}

// kubernetesRefused are the kubernetes plugin's options kubesky lacks.
var kubernetesRefused = map[string]string{
	"labels":           "kube2sky writes every Service, whatever its labels",
	"namespace_labels": "kube2sky writes the Services of every namespace",
	"noendpoints":      "kube2sky writes the endpoints of headless Services",
	"multicluster":     "not read from a Corefile",
	"apex":             "skydns's apex NS is ns.dns.<zone>",
}

func (t *translator) kubernetesOption(o option) {
	a := o.at("kubernetes")
	if t.listed(a, o.name, kubernetesIgnored, kubernetesRefused) {
		return
	}
	switch o.name {
	case "pods":
		t.pods(a, o.args)
	case "ttl":
		t.kubernetesTTL(a, o.args)
	case "fallthrough":
		t.kubernetesFallthrough(a, o.args)
	case "ignore":
		t.ignoreEmpty(a, o.args)
	case "endpoint_pod_names":
		t.use(a, "a headless Service's endpoint without a hostname is named by its pod", k2s("endpoint-pod-names", "true"))
	default:
		t.unknownOption("kubernetes", o)
	}
}

func (t *translator) ignoreEmpty(a at, args []string) {
	if len(args) != 1 || args[0] != "empty_service" {
		t.refuse(a, "ignore takes empty_service")
		return
	}
	t.use(a, "a cluster IP Service without a ready endpoint is NXDOMAIN", k2s("ignore-empty-services", "true"))
}

func (t *translator) pods(a at, args []string) {
	if len(args) != 1 || (args[0] != "disabled" && args[0] != "insecure" && args[0] != "verified") {
		t.refuse(a, "pods takes disabled, insecure or verified")
		return
	}
	t.use(a, "pod names <a-b-c-d>.<ns>.pod."+t.cluster+" answered "+args[0], sky("pod-records", args[0]), k2s("pod-records", args[0]))
}

func (t *translator) kubernetesTTL(a at, args []string) {
	if len(args) != 1 {
		t.refuse(a, "ttl takes one number of seconds")
		return
	}
	n, why := count(args[0], 0, 3600)
	if why != "" {
		t.refuse(a, why)
		return
	}
	ttl := strconv.Itoa(n)
	t.use(a, "the records' TTL", sky("ttl", ttl), k2s("ttl", ttl))
}

// kubernetesFallthrough passes on the names no record answers: of the
// cluster domain (skydns --zone-fallthrough) and of the reverse zones
// (--reverse-fallthrough); all of them when no zone is named.
func (t *translator) kubernetesFallthrough(a at, args []string) {
	cluster, reverse := len(args) == 0, len(args) == 0
	for _, z := range args {
		switch zone, _ := normalZone(z); {
		case isReverse(zone):
			reverse = true
		case zone == t.cluster:
			cluster = true
		default:
			t.refuse(a, "skydns passes on the names of the whole cluster domain or none, not those of "+z)
			return
		}
	}
	flags := []flag{sky("reverse-fallthrough", strconv.FormatBool(reverse))}
	passed := "PTR questions"
	if cluster {
		flags = append(flags, sky("zone-fallthrough", t.cluster))
		passed = "questions for names of " + t.cluster
		if reverse {
			passed += " and PTR questions"
		}
	}
	t.use(a, passed+" that no record answers go to the upstreams", flags...)
}
