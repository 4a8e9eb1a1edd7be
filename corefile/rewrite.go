package corefile

import (
	"slices"
	"strings"

	"github.com/kubesky/kubesky/skydns/rewrite"
)

// rewrite translates one rewrite directive into a skydns --rewrite rule:
// its words, and a block's words after them, as CoreDNS reads them (a
// block holds one rule). skydns applies the rules to every question, so
// they must be in a server block for the root.
func (t *translator) rewrite(s server, u use) {
	words := slices.Clone(u.args)
	for _, o := range u.options {
		words = append(append(words, o.name), o.args...)
	}
	text := strings.Join(words, " ")
	if !slices.Contains(s.zones, ".") {
		t.refuse(u.at(), "skydns applies rewrite rules to every question: put them in the server block for .")
		return
	}
	if _, err := rewrite.Parse(text); err != nil {
		t.refuse(u.at(), err.Error())
		return
	}
	t.use(u.at(), "the question's name is rewritten before it is answered", sky("rewrite", text))
}
