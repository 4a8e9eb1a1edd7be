package corefile

import (
	"fmt"
	"strings"
)

// at is where an item is: its line, its directive and its words.
type at struct {
	line  int
	dir   string
	words string
}

// flag is one daemon flag an item sets.
type flag struct{ daemon, name, value string }

func sky(name, value string) flag { return flag{"skydns", name, value} }
func k2s(name, value string) flag { return flag{"kube2sky", name, value} }

// repeatable are the flags that take several values, one per setting.
var repeatable = map[string]bool{"zone": true, "stub-domain": true, "rewrite": true, "template": true, "dnssec-key": true}

// translator turns one Corefile's server blocks into a Plan.
type translator struct {
	plan *Plan
	// cluster is the cluster domain, "cluster.local.": the kubernetes
	// plugin's zone, or Options.ClusterZone when there is none.
	cluster string
	// seen are the directives present in some block, and the kubernetes
	// plugin's options ("kubernetes ttl").
	seen map[string]bool
	// hostsConfigMap is Options.HostsConfigMap.
	hostsConfigMap string
	// readKey is Options.ReadKey.
	readKey func(key string) (string, error)
}

func (t *translator) add(a at, v Verdict, text string) {
	t.plan.Items = append(t.plan.Items, Item{Line: a.line, Directive: a.dir, Words: a.words, Verdict: v, Text: text})
}

func (t *translator) ignore(a at, why string) { t.add(a, Ignored, why) }
func (t *translator) refuse(a at, why string) { t.add(a, Refused, why) }

// use records a used item and the flags it sets; a flag that another line
// already set to another value refuses the item instead.
func (t *translator) use(a at, text string, flags ...flag) {
	var args []string
	for _, f := range flags {
		if conflict := t.set(f, a.line); conflict != "" {
			t.refuse(a, conflict)
			return
		}
		args = append(args, f.daemon+" --"+f.name+"="+f.value)
	}
	if len(args) > 0 {
		text += ": " + strings.Join(args, ", ")
	}
	t.add(a, Used, text)
}

// set adds a setting, or says why it conflicts with one already made.
func (t *translator) set(f flag, line int) string {
	for _, s := range t.plan.Settings {
		if s.Daemon != f.daemon || s.Flag != f.name {
			continue
		}
		switch {
		case s.Value == f.value:
			return ""
		case !repeatable[f.name]:
			return fmt.Sprintf("%s --%s=%s conflicts with line %d, which sets it to %s (kubesky has one such setting for every zone)",
				f.daemon, f.name, f.value, s.Line, s.Value)
		}
	}
	t.plan.Settings = append(t.plan.Settings, Setting{Daemon: f.daemon, Flag: f.name, Value: f.value, Line: line})
	return ""
}

// setDefault sets a flag to CoreDNS's default, where the Corefile says
// nothing and kubesky's default differs.
func (t *translator) setDefault(f flag) {
	for _, s := range t.plan.Settings {
		if s.Daemon == f.daemon && s.Flag == f.name {
			return
		}
	}
	t.plan.Settings = append(t.plan.Settings, Setting{Daemon: f.daemon, Flag: f.name, Value: f.value})
}

// coreDNSDefaults sets, for what the Corefile leaves out, the flags whose
// kubesky default differs from CoreDNS's behaviour without it.
func (t *translator) coreDNSDefaults() {
	if !t.seen["loadbalance"] {
		t.setDefault(sky("rotate", "false"))
	}
	if !t.seen["cache"] {
		t.setDefault(sky("cache-size", "0"))
	}
	if !t.seen["forward"] {
		t.setDefault(sky("allow-recursion", ""))
	}
	if t.seen["kubernetes"] {
		if !t.seen["kubernetes ttl"] {
			t.setDefault(sky("ttl", "5"))
			t.setDefault(k2s("ttl", "5"))
		}
		if !t.seen["kubernetes fallthrough"] {
			t.setDefault(sky("reverse-fallthrough", "false"))
		}
	}
	t.checkAutopath()
}

// checkAutopath refuses autopath unless pod records are verified, which
// skydns's autopath needs.
func (t *translator) checkAutopath() {
	var line int
	pods := "disabled"
	for _, s := range t.plan.Settings {
		switch {
		case s.Daemon == "skydns" && s.Flag == "autopath":
			line = s.Line
		case s.Daemon == "skydns" && s.Flag == "pod-records":
			pods = s.Value
		}
	}
	if line == 0 || pods == "verified" {
		return
	}
	for i, it := range t.plan.Items {
		if it.Line == line && it.Directive == "autopath" {
			t.plan.Items[i].Verdict = Refused
			t.plan.Items[i].Text = "skydns's autopath needs the kubernetes plugin's `pods verified`, not " + pods
		}
	}
}
