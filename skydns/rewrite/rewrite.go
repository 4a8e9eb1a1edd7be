// Package rewrite changes the name a question asks for before skydns
// answers it, and the answer's names back, with the meaning of CoreDNS's
// rewrite plugin's name rules: `[stop|continue] name
// [exact|prefix|suffix|substring|regex] FROM TO [answer auto]`, one --rewrite
// flag each, in order.
//
// The first rule is matched against the name as the client asked it (lower
// case, fully qualified; FROM and TO are made fully qualified too, but
// for a regex's FROM), each later one against the name the rules before
// made: a matching `stop` rule is the last one applied, a matching
// `continue` rule lets the next ones be tried. The answer's question is
// always the client's; its records' owner names and targets are mapped
// back, last rule first, by `answer auto` rules (and always by exact
// rules), each to the name it was given.
package rewrite

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// maxPatternLen bounds a regular expression's length.
const maxPatternLen = 10000

// Rule is one name rule.
type Rule struct {
	text string
	stop bool
	kind string // exact, prefix, suffix, substring or regex
	from string // lower case; exact and suffix: fully qualified
	to   string
	re   *regexp.Regexp // regex only
	auto bool           // answer auto (always for exact)
}

// String is the rule as given.
func (r *Rule) String() string { return r.text }

// Parse reads one rule: the words after `rewrite` in a Corefile.
func Parse(text string) (*Rule, error) {
	args := strings.Fields(text)
	r := &Rule{text: text, stop: true}
	if len(args) > 0 && (args[0] == "stop" || args[0] == "continue") {
		r.stop, args = args[0] == "stop", args[1:]
	}
	if len(args) == 0 || args[0] != "name" {
		return nil, fmt.Errorf("rewrite %q: only name rules are supported", text)
	}
	args = args[1:]
	if len(args) == 2 {
		args = append([]string{"exact"}, args...)
	}
	if len(args) != 3 && !(len(args) == 5 && args[3] == "answer" && args[4] == "auto") {
		return nil, fmt.Errorf("rewrite %q: want name [exact|prefix|suffix|substring|regex] FROM TO [answer auto]", text)
	}
	r.kind, r.auto = strings.ToLower(args[0]), len(args) == 5
	if err := r.setFromTo(args[1], args[2]); err != nil {
		return nil, fmt.Errorf("rewrite %q: %w", text, err)
	}
	return r, nil
}

func (r *Rule) setFromTo(from, to string) error {
	switch r.kind {
	case "exact", "prefix", "suffix", "substring": // CoreDNS makes each a fully qualified name
		r.from, r.to = fqdnLower(from), fqdnLower(to)
		r.auto = r.auto || r.kind == "exact"
	case "regex":
		return r.setRegex(from, to)
	default:
		return fmt.Errorf("match %q: want exact, prefix, suffix, substring or regex", r.kind)
	}
	return nil
}

func (r *Rule) setRegex(from, to string) error {
	if len(from) > maxPatternLen {
		return fmt.Errorf("regular expression longer than %d characters", maxPatternLen)
	}
	re, err := regexp.Compile(from)
	if err != nil {
		return fmt.Errorf("regular expression %q: %w", from, err)
	}
	for i := re.NumSubexp() + 1; i < 100; i++ {
		if strings.Contains(to, "{"+strconv.Itoa(i)+"}") {
			return fmt.Errorf("%q uses group {%d}; %q has %d", to, i, from, re.NumSubexp())
		}
	}
	r.re, r.to = re, fqdnLower(to)
	return nil
}

func fqdnLower(s string) string { return strings.ToLower(dns.Fqdn(s)) }

// rewrite returns name rewritten by r, and whether r matches.
func (r *Rule) rewrite(name string) (string, bool) {
	switch r.kind {
	case "exact":
		return r.to, name == r.from
	case "prefix":
		rest, ok := strings.CutPrefix(name, r.from)
		return r.to + rest, ok
	case "suffix":
		rest, ok := strings.CutSuffix(name, r.from)
		return rest + r.to, ok
	case "substring":
		return strings.ReplaceAll(name, r.from, r.to), strings.Contains(name, r.from)
	}
	groups := r.re.FindStringSubmatch(name)
	if groups == nil {
		return "", false
	}
	out := r.to
	for i, g := range groups {
		out = strings.ReplaceAll(out, "{"+strconv.Itoa(i)+"}", g)
	}
	return out, true
}

// Rules are the rules in the order given.
type Rules []*Rule

// ParseAll reads one rule from each text.
func ParseAll(texts []string) (Rules, error) {
	var rs Rules
	for _, t := range texts {
		r, err := Parse(t)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// Rewritten is what applying the rules to a query did: the query to
// answer and how to turn its answer back into the answer to the original.
type Rewritten struct {
	Query    *dns.Msg
	original dns.Question
	back     []func(string) string // in the order to apply them
}

// Apply returns the query rs turn req into, or nil when no rule matches
// req's question. A rewrite to a name that is not a valid domain name is
// an error (the answer is SERVFAIL).
func (rs Rules) Apply(req *dns.Msg) (*Rewritten, error) {
	if len(rs) == 0 || len(req.Question) != 1 {
		return nil, nil
	}
	name := strings.ToLower(dns.Fqdn(req.Question[0].Name))
	var w *Rewritten
	for _, r := range rs {
		to, ok := r.rewrite(name)
		if !ok {
			continue
		}
		if _, valid := dns.IsDomainName(to); !valid {
			return nil, fmt.Errorf("rewrite %q made %q, not a domain name", r.text, to)
		}
		if w == nil {
			w = &Rewritten{Query: req.Copy(), original: req.Question[0]}
		}
		w.Query.Question[0].Name = to
		if back := r.back(to, name); back != nil {
			w.back = append([]func(string) string{back}, w.back...)
		}
		name = to
		if r.stop {
			break
		}
	}
	return w, nil
}

// back is how r's `answer auto` maps a name in the answer to the rewritten
// name asked for, to back to name: nil without it. A suffix rule swaps
// the suffixes back; the others map the rewritten name, and names under
// it, to the original.
func (r *Rule) back(rewritten, name string) func(string) string {
	switch {
	case !r.auto:
		return nil
	case r.kind == "suffix":
		return func(s string) string {
			if rest, ok := strings.CutSuffix(s, r.to); ok {
				return rest + r.from
			}
			return s
		}
	}
	return func(s string) string {
		if s == rewritten {
			return name
		}
		if strings.HasSuffix(s, "."+rewritten) {
			return s[:len(s)-len(rewritten)] + name
		}
		return s
	}
}

// Answer turns resp, the answer to w.Query, into the answer to the
// original query: its question, and the names its rules map back.
func (w *Rewritten) Answer(resp *dns.Msg) *dns.Msg {
	if len(resp.Question) == 1 {
		resp.Question[0] = w.original
	}
	if len(w.back) == 0 {
		return resp
	}
	for _, section := range [][]dns.RR{resp.Ns, resp.Answer, resp.Extra} {
		for _, rr := range section {
			for _, back := range w.back {
				mapRecord(rr, back)
			}
		}
	}
	return resp
}

// mapRecord maps rr's owner name and the name it points to with back.
func mapRecord(rr dns.RR, back func(string) string) {
	h := rr.Header()
	h.Name = back(h.Name)
	switch v := rr.(type) {
	case *dns.CNAME:
		v.Target = back(v.Target)
	case *dns.SRV:
		v.Target = back(v.Target)
	case *dns.MX:
		v.Mx = back(v.Mx)
	case *dns.NS:
		v.Ns = back(v.Ns)
	case *dns.DNAME:
		v.Target = back(v.Target)
	case *dns.NAPTR:
		v.Replacement = back(v.Replacement)
	case *dns.SOA:
		v.Ns = back(v.Ns)
	case *dns.PTR:
		v.Ptr = back(v.Ptr)
	}
}
