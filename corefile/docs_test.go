package corefile

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docDirectives are the directive lines the docs' options are read under.
var docDirectives = map[string]string{
	"kubernetes": "kubernetes cluster.local", "forward": "forward . 8.8.8.8", "cache": "cache",
	"hosts": "hosts", "log": "log", "health": "health", "template": "template IN A example.org",
}

// Every example in docs/corefile.md's table gets, from Read, the verdict
// of its column.
func TestTheDocumentedVerdictsAreRead(t *testing.T) {
	doc, err := os.ReadFile("../docs/corefile.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (`[a-z]+`|others) \\|(.*)\\|(.*)\\|(.*)\\|$")
	sample := regexp.MustCompile("`([^`]+)`")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) != 8 {
		t.Fatalf("found %d plugin rows in docs/corefile.md, want 8", len(rows))
	}
	n := 0
	for _, r := range rows {
		plugin := strings.Trim(r[1], "`")
		for col, verdict := range []Verdict{Used, Ignored, Refused} {
			for _, m := range sample.FindAllStringSubmatch(r[2+col], -1) {
				n++
				it := documentedItem(t, plugin, m[1])
				if it.Verdict != verdict {
					t.Errorf("%s %q: %s (%s), docs say %s", plugin, m[1], it.Verdict, it.Text, verdict)
				}
			}
		}
	}
	if n < 60 {
		t.Errorf("checked %d examples, want every one", n)
	}
}

// documentedItem reads one example in a root block that also has a
// kubernetes plugin with verified pods: a directive line, or an option of
// the plugin's directive in docDirectives. It returns the example's item.
func documentedItem(t *testing.T, plugin, example string) Item {
	t.Helper()
	var b strings.Builder
	b.WriteString(".:53 {\n")
	if plugin != "kubernetes" {
		b.WriteString("  kubernetes cluster.local {\n    pods verified\n  }\n")
	}
	directive, ok := docDirectives[plugin]
	if !ok || strings.HasPrefix(example, plugin) {
		b.WriteString("  " + example + "\n}\n")
	} else {
		b.WriteString("  " + directive + " {\n    " + example + "\n  }\n}\n")
	}
	p, err := Read("Corefile", []byte(b.String()), DefaultOptions())
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	for _, it := range p.Items {
		if it.Words == example && it.Line > 1 {
			return it
		}
	}
	t.Fatalf("no item %q in %+v", example, p.Items)
	return Item{}
}
