package corefile

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// etcHosts is the file the hosts plugin reads when it names none.
const etcHosts = "/etc/hosts"

// coreDNSConfigDir is where CoreDNS's Deployments mount their ConfigMap:
// a hosts file there is one of its keys.
const coreDNSConfigDir = "/etc/coredns/"

// errNoKeys is the error of a hosts file when the Corefile was read
// without its ConfigMap's other keys.
var errNoKeys = errors.New("not read: the Corefile's other keys are not at hand")

// noFallthrough refuses a hosts plugin for the root zone without fallthrough.
const noFallthrough = "without fallthrough CoreDNS answers NXDOMAIN for every name it does not list, in every zone; skydns cannot"

func (t *translator) hosts(s server, u use) {
	entries, passOn := t.hostsBlock(u)
	if len(u.args) > 0 && u.args[0] != etcHosts {
		fromFile, why := t.hostsFile(u)
		if why != "" {
			t.refuse(u.at(), why)
			for _, e := range entries {
				t.ignore(e.at(u.name), "its hosts directive is refused")
			}
			return
		}
		entries = append(fromFile, entries...)
	}
	zones := s.zones
	if len(u.args) > 1 {
		zones = u.args[1:]
	}
	everything := !passOn && zones[0] == "."
	if len(entries) == 0 {
		if everything {
			t.refuse(u.at(), noFallthrough)
		} else {
			t.ignore(u.at(), "no inline entries: the pod's own "+etcHosts+" is not served")
		}
		return
	}
	domain, why := hostsDomain(zones, entries, t.cluster)
	if why != "" {
		t.refuse(u.at(), why)
		return
	}
	t.hostEntries(u, entries, domain)
	if everything {
		t.refuse(u.at(), noFallthrough)
		return
	}
	t.use(u.at(), "kube2sky serves the entries from the ConfigMap "+t.hostsConfigMap+" (its data below); names under "+domain+
		" no entry lists answer NXDOMAIN; the records get kube2sky's --ttl and are also served under hosts."+t.cluster,
		k2s("hosts-configmap", t.hostsConfigMap), k2s("hosts-domain", strings.TrimSuffix(domain, ".")), sky("zone", domain))
}

// hostsFile returns the entries of a hosts plugin's file, each on the
// plugin's line, or why kube2sky cannot serve them: the file must be a
// key of the ConfigMap the Corefile is read from (Options.ReadKey), as
// CoreDNS reads it under /etc/coredns/.
func (t *translator) hostsFile(u use) ([]option, string) {
	path := u.args[0]
	key, inConfigMap := strings.CutPrefix(path, coreDNSConfigDir)
	if !inConfigMap || strings.Contains(key, "/") || key == "" {
		return nil, "kube2sky serves host files that are keys of CoreDNS's ConfigMap (mounted at " + coreDNSConfigDir + "), not " + path
	}
	var text string
	var err error = errNoKeys
	if t.readKey != nil {
		text, err = t.readKey(key)
	}
	if err != nil {
		return nil, "the ConfigMap's key " + key + " (" + path + "): " + err.Error()
	}
	var entries []option
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if _, err := netip.ParseAddr(fields[0]); err != nil {
			return nil, key + ": " + strconv.Quote(fields[0]) + " is not an address"
		}
		entries = append(entries, option{line: u.line, name: fields[0], args: fields[1:]})
	}
	return entries, ""
}

// hostsBlock sorts a hosts block's lines: the inline entries, returned,
// and the options, given their verdicts; passOn says whether one is
// fallthrough.
func (t *translator) hostsBlock(u use) (entries []option, passOn bool) {
	for _, o := range u.options {
		if _, err := netip.ParseAddr(o.name); err == nil {
			entries = append(entries, o)
			continue
		}
		passOn = passOn || o.name == "fallthrough"
		t.hostsOption(o)
	}
	return entries, passOn
}

// hostsDomain is the one domain every entry's names are under: the hosts
// plugin's zone, or the parent of its first name when the zone is the
// root. It must be outside skydns's own zones.
func hostsDomain(zones []string, entries []option, cluster string) (string, string) {
	if len(zones) != 1 {
		return "", "kube2sky serves host entries under one domain (--hosts-domain), not " + strings.Join(zones, " ")
	}
	domain, why := normalZone(zones[0])
	if why != "" {
		return "", zones[0] + ": " + why
	}
	if domain == "." {
		_, parent, _ := strings.Cut(strings.ToLower(strings.TrimSuffix(entries[0].args[0], ".")), ".")
		if domain, why = normalZone(parent); parent == "" || why != "" {
			return "", "kube2sky serves host entries under one domain: name " + entries[0].args[0] + " in full"
		}
	}
	if domain == cluster || strings.HasSuffix(domain, "."+cluster) || isReverse(domain) || strings.HasSuffix(cluster, "."+domain) {
		return "", "kube2sky serves host entries under a domain outside " + cluster + " and the reverse zones, not " + domain
	}
	return domain, ""
}

// hostEntries uses or refuses each inline entry; when kube2sky can serve
// them all, they go into Plan.Hosts.
func (t *translator) hostEntries(u use, entries []option, domain string) {
	ok := true
	var text strings.Builder
	for _, e := range entries {
		if why := hostNames(e.args, domain); why != "" {
			t.refuse(e.at(u.name), why)
			ok = false
			continue
		}
		t.use(e.at(u.name), "A or AAAA for these names, and a PTR for the address")
		text.WriteString(e.name + " " + strings.Join(e.args, " ") + "\n")
	}
	if ok {
		t.plan.Hosts += text.String()
	}
}

// hostNames says why kube2sky cannot serve an entry's names under domain.
func hostNames(names []string, domain string) string {
	if len(names) == 0 {
		return "an address without a name"
	}
	for _, n := range names {
		name := strings.ToLower(strings.TrimSuffix(n, "."))
		switch {
		case strings.HasPrefix(name, "*."):
			return "kube2sky serves no wildcard host names: " + n
		case !contract.ValidDomain(name):
			return n + " is not a host name (letters, digits, hyphens and dots)"
		case name+"." != domain && !strings.HasSuffix(name+".", "."+domain):
			return n + " is not under " + domain + ", the one domain kube2sky serves host entries under"
		}
	}
	return ""
}

// hostsIgnored and hostsRefused are the hosts plugin's options that
// change nothing kubesky answers, and those kubesky lacks, with why.
var (
	hostsIgnored = map[string]string{
		"reload": "kube2sky watches the hosts ConfigMap: edits are served within a second",
		"ttl":    "kube2sky gives host records the Services' TTL (its --ttl)",
	}
	hostsRefused = map[string]string{
		"no_reverse":              "kube2sky writes a PTR for every host address",
		"fallthrough_unsupported": "skydns answers NODATA for a host name's other types",
	}
)

func (t *translator) hostsOption(o option) {
	a := o.at("hosts")
	if t.listed(a, o.name, hostsIgnored, hostsRefused) {
		return
	}
	if o.name == "fallthrough" {
		t.use(a, "names outside the host domain go on to the next zone or the upstreams")
		return
	}
	t.unknownOption("hosts", o)
}
