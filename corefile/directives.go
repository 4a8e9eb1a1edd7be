package corefile

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// handlers translate the plugins kubesky has an equivalent for.
var handlers = map[string]func(*translator, server, use){
	"kubernetes":  (*translator).kubernetes,
	"forward":     (*translator).forward,
	"cache":       (*translator).cache,
	"hosts":       (*translator).hosts,
	"health":      (*translator).health,
	"log":         (*translator).log,
	"loadbalance": (*translator).loadbalance,
	"autopath":    (*translator).autopath,
	"rewrite":     (*translator).rewrite,
	"template":    (*translator).template,
	"dnstap":      (*translator).dnstap,
	"dnssec":      (*translator).dnssec,
}

// quiet are the plugins that change nothing kubesky answers, with why.
var quiet = map[string]string{
	"errors":     "skydns logs its own errors (--log-queries=error also logs every failed answer)",
	"ready":      "skydns serves /readyz on its --http-addr",
	"prometheus": "skydns serves /metrics on its --http-addr, named skydns_*",
	"reload":     "skydns --corefile reads the Corefile every 5s and applies a change of upstreams, stub domains, ACL or cache size whole; others need a restart",
	"loop":       "skydns always probes every upstream for a forwarding loop and stops forwarding to one that loops (its names get SERVFAIL), reported in its log, skydns_forward_loop and /readyz/forward, the zones still answered; it never exits for one",
	"bind":       "skydns listens on --dns-addr (node-local: also --node-local-interface), set where it is deployed",
	"cancel":     "skydns bounds every forwarded query by --forward-deadline",
}

// lacking are CoreDNS plugins kubesky has no equivalent of in a Corefile,
// with where to look instead when kubesky has the feature elsewhere.
var lacking = map[string]string{
	"tls":      "set skydns --tls-addr, --tls-cert and --tls-key instead",
	"transfer": "set skydns --transfer-to and --notify instead",
	"pprof":    "set skydns --pprof instead",
}

// corednsPlugins are CoreDNS's other plugins: known, but not in kubesky.
var corednsPlugins = []string{
	"acl", "any", "auto", "azure", "bufsize", "chaos", "clouddns", "debug", "dns64", "erratic",
	"etcd", "file", "geoip", "grpc", "header", "k8s_external", "local", "metadata", "minimal",
	"multisocket", "nomad", "nsid", "root", "route53", "secondary", "sign",
	"timeouts", "trace", "tsig", "view", "whoami",
}

func (t *translator) directive(s server, u use) {
	if h, ok := handlers[u.name]; ok {
		h(t, s, u)
		return
	}
	if why, ok := quiet[u.name]; ok {
		t.ignoreUse(u, why)
		return
	}
	if hint, ok := lacking[u.name]; ok {
		t.refuse(u.at(), "the "+u.name+" plugin is not read from a Corefile: "+hint)
		return
	}
	for _, p := range corednsPlugins {
		if p == u.name {
			t.refuse(u.at(), "kubesky has no equivalent of CoreDNS's "+u.name+" plugin")
			return
		}
	}
	t.refuse(u.at(), "unknown plugin "+strconv.Quote(u.name))
}

// ignoreUse ignores a directive and every line of its block for one reason.
func (t *translator) ignoreUse(u use, why string) {
	t.ignore(u.at(), why)
	for _, o := range u.options {
		t.ignore(o.at(u.name), why)
	}
}

// listed gives an option named in ignored or refused that verdict, with
// its reason, and reports whether it was named.
func (t *translator) listed(a at, name string, ignored, refused map[string]string) bool {
	if why, ok := ignored[name]; ok {
		t.ignore(a, why)
		return true
	}
	if why, ok := refused[name]; ok {
		t.refuse(a, why)
		return true
	}
	return false
}

// unknownOption refuses an option kubesky does not know for a directive.
func (t *translator) unknownOption(dir string, o option) {
	t.refuse(o.at(dir), fmt.Sprintf("%s has no option %q that kubesky supports", dir, o.name))
}

func (t *translator) health(_ server, u use) {
	text := "skydns serves /healthz on its --http-addr"
	if len(u.args) > 0 {
		text += " (not on " + strings.Join(u.args, " ") + ")"
	}
	t.use(u.at(), text)
	for _, o := range u.options {
		if o.name != "lameduck" {
			t.unknownOption(u.name, o)
			continue
		}
		d, why := oneDuration(o.args)
		if why != "" {
			t.refuse(o.at(u.name), why)
			continue
		}
		t.use(o.at(u.name), "after SIGTERM skydns fails /readyz but answers for this long", sky("lameduck", d.String()))
	}
}

// logClasses are the log plugin's classes kubesky's --log-queries has.
var logClasses = map[string]string{"all": "all", "denial": "denial", "error": "error"}

func (t *translator) log(_ server, u use) {
	for _, a := range u.args {
		switch {
		case strings.Contains(a, "{"):
			t.ignore(u.at(), "skydns writes its own line format, not "+a)
		case a != ".":
			t.refuse(u.at(), "skydns logs the answers for every name, not only those under "+a)
			return
		}
	}
	classes := []string{"all"}
	for _, o := range u.options {
		if o.name != "class" || len(o.args) == 0 {
			t.unknownOption(u.name, o)
			continue
		}
		classes = t.logClasses(u.name, o)
	}
	t.use(u.at(), "skydns logs one line per answer", sky("log-queries", strings.Join(classes, ",")))
}

func (t *translator) logClasses(dir string, o option) []string {
	var out []string
	for _, c := range o.args {
		v, ok := logClasses[c]
		if !ok {
			t.refuse(o.at(dir), fmt.Sprintf("skydns logs the classes all, denial and error, not %q", c))
			return []string{"all"}
		}
		out = append(out, v)
	}
	t.use(o.at(dir), "the answers of these classes")
	return out
}

func (t *translator) loadbalance(_ server, u use) {
	if len(u.args) > 1 || (len(u.args) == 1 && u.args[0] != "round_robin") || len(u.options) > 0 {
		t.refuse(u.at(), "skydns rotates records round robin only")
		return
	}
	t.use(u.at(), "A, AAAA and SRV records turn by one per answer", sky("rotate", "true"))
}

func (t *translator) autopath(_ server, u use) {
	if len(u.args) != 1 || u.args[0] != "@kubernetes" {
		t.refuse(u.at(), "skydns's autopath follows the pod's search path from kube2sky's pod records: only `autopath @kubernetes`")
		return
	}
	t.use(u.at(), "a pod's first search-path query gets what its search path reaches", sky("autopath", "true"))
}

// oneDuration reads an option's single duration argument.
func oneDuration(args []string) (time.Duration, string) {
	if len(args) != 1 {
		return 0, "want one duration, like 5s"
	}
	return parseDuration(args[0])
}

// parseDuration reads a Go duration, or whole seconds as CoreDNS accepts.
func parseDuration(s string) (time.Duration, string) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, ""
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Sprintf("%q is not a duration, like 5s", s)
	}
	return d, ""
}

// count reads a whole number from min to max.
func count(s string, lo, hi int) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Sprintf("%q is not a whole number from %d to %d", s, lo, hi)
	}
	return n, ""
}
