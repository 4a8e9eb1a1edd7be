package corefile

import (
	"encoding/json"
	"strings"

	"github.com/kubesky/kubesky/skydns/template"
)

// templateOptions are the template plugin's options skydns has, each
// setting a Spec field from its arguments.
var templateOptions = map[string]func(*template.Spec, []string) bool{
	"match":       func(s *template.Spec, a []string) bool { s.Match = append(s.Match, a...); return len(a) > 0 },
	"answer":      func(s *template.Spec, a []string) bool { s.Answer = append(s.Answer, a...); return len(a) == 1 },
	"additional":  func(s *template.Spec, a []string) bool { s.Additional = append(s.Additional, a...); return len(a) == 1 },
	"authority":   func(s *template.Spec, a []string) bool { s.Authority = append(s.Authority, a...); return len(a) == 1 },
	"rcode":       func(s *template.Spec, a []string) bool { s.Rcode = first(a); return len(a) == 1 },
	"fallthrough": func(s *template.Spec, a []string) bool { s.Fallthrough, s.FallthroughZones = true, a; return true },
}

func first(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}

// template translates one template block into a skydns --template value;
// its zones default to the server block's.
func (t *translator) template(s server, u use) {
	if len(u.args) < 2 {
		t.refuse(u.at(), "template takes CLASS TYPE [ZONE...]")
		return
	}
	spec := template.Spec{Class: u.args[0], Type: u.args[1], Zones: u.args[2:]}
	if len(spec.Zones) == 0 {
		spec.Zones = s.zones
	}
	for _, o := range u.options {
		set, ok := templateOptions[o.name]
		if !ok || !set(&spec, o.args) {
			t.refuse(o.at(u.name), "skydns's templates take match, answer, additional, authority, rcode and fallthrough, one record per line")
			return
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(spec) // a struct of strings always encodes
	value := strings.TrimSpace(b.String())
	if _, err := template.Parse(value); err != nil {
		t.refuse(u.at(), err.Error())
		return
	}
	t.use(u.at(), "questions it matches are answered from the template", sky("template", value))
}
