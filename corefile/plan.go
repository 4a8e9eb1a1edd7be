package corefile

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Verdict is what kubesky does with one directive or option.
type Verdict int

// The verdicts, from harmless to fatal.
const (
	// Used: kubesky does what the line asks, through the settings named.
	Used Verdict = iota
	// Ignored: the line changes nothing kubesky would answer; Item.Text
	// says why.
	Ignored
	// Refused: kubesky lacks the plugin, option or value; one refused
	// line refuses the whole Corefile.
	Refused
)

func (v Verdict) String() string {
	switch v {
	case Used:
		return "used"
	case Ignored:
		return "ignored"
	}
	return "refused"
}

// Item is one line of the Corefile with its verdict: a server block's
// zones, a directive, or one option inside a directive's block.
type Item struct {
	Line      int
	Directive string // the plugin ("forward"), or "" for a server block's zones
	Words     string // the line's words as written, from the directive or option on
	Verdict   Verdict
	Text      string // what kubesky does, or why it ignores or refuses it
}

// Setting is one flag of a kubesky daemon that the Corefile asks for.
type Setting struct {
	Daemon string // "skydns" or "kube2sky"
	Flag   string // without the dashes: "forward-max-concurrent"
	Value  string
	// Line is the Corefile line that asks for it; 0 for CoreDNS's default
	// where the Corefile says nothing and kubesky's default differs.
	Line int
}

// Arg is the setting as a command-line argument: --flag=value.
func (s Setting) Arg() string { return "--" + s.Flag + "=" + shellQuoted(s.Value) }

// shellQuoted is v as one word of a POSIX shell: as it is when it holds
// no space or character the shell reads, else in single quotes.
func shellQuoted(v string) string {
	plain := func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.,:/=@[]%#+", r)
	}
	if strings.IndexFunc(v, func(r rune) bool { return !plain(r) }) < 0 {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// Plan is what kubesky makes of a Corefile: a verdict for every line that
// says something, the flags that do the same in kubesky, and the host
// entries kube2sky should serve.
type Plan struct {
	File     string
	Items    []Item    // in Corefile order
	Settings []Setting // in the order the Corefile asks for them
	// Hosts is hosts-file text of the hosts plugins' inline entries, for
	// the ConfigMap kube2sky's --hosts-configmap names ("" if none).
	Hosts string
}

// Refused returns the refused items, in Corefile order.
func (p *Plan) Refused() []Item {
	var out []Item
	for _, it := range p.Items {
		if it.Verdict == Refused {
			out = append(out, it)
		}
	}
	return out
}

// Err is nil when kubesky can use the Corefile as it is, else one line
// naming the first refused directive or option and its line.
func (p *Plan) Err() error {
	refused := p.Refused()
	if len(refused) == 0 {
		return nil
	}
	first := refused[0]
	more := ""
	if n := len(refused) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more refused %s)", n, plural(n, "line", "lines"))
	}
	return fmt.Errorf("%s:%d: %s: refused: %s%s", p.File, first.Line, first.Words, first.Text, more)
}

// Flags returns the daemon's settings as command-line arguments.
func (p *Plan) Flags(daemon string) []string {
	var out []string
	for _, s := range p.Settings {
		if s.Daemon == daemon {
			out = append(out, s.Arg())
		}
	}
	return out
}

// sortItems puts the items in line order, keeping the order of one line's.
func (p *Plan) sortItems() {
	slices.SortStableFunc(p.Items, func(a, b Item) int { return a.Line - b.Line })
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// words joins a line's words for an Item.
func words(ws ...string) string {
	return strings.Join(slices.DeleteFunc(ws, func(w string) bool { return w == "" }), " ")
}
