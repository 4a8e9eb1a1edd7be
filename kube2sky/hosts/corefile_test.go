package hosts

import (
	"strings"
	"testing"
)

func TestFromCorefile(t *testing.T) {
	const usable = ". {\n  hosts {\n    10.0.0.5 db1.example.corp\n    fallthrough\n  }\n  forward . 10.0.0.53\n}\n"
	for _, c := range []struct {
		name, text, domain string
		want, problem      string
	}{
		{"hosts entries", usable, "example.corp", "10.0.0.5 db1.example.corp", ""},
		{"no hosts plugin", ". {\n  forward . 10.0.0.53\n}\n", "example.corp", "", ""},
		{"another --hosts-domain", usable, "example.org", "", `names under example.corp, and kube2sky's --hosts-domain is "example.org"`},
		{"a refused directive", ". {\n  hosts {\n    10.0.0.5 db1.example.corp\n    fallthrough\n  }\n  whoami\n}\n", "example.corp", "", "whoami"},
		{"not a Corefile", ". {\n  hosts {\n", "example.corp", "", "not a Corefile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, problem := FromCorefile(c.text, c.domain, nil)
			if c.problem != "" {
				if problem == nil || !strings.Contains(problem.Error(), c.problem) || !strings.HasPrefix(problem.Error(), "data[Corefile]: ") {
					t.Fatalf("problem %v, want one naming %q", problem, c.problem)
				}
				return
			}
			if problem != nil || strings.TrimSpace(got) != c.want {
				t.Errorf("FromCorefile = %q, %v; want %q", got, problem, c.want)
			}
		})
	}
}
