package hosts

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// Line is one hosts-file line that names an address.
type Line struct {
	Key    string // the data key the text came from
	Number int    // 1-based line number
	Addr   netip.Addr
	Names  []string // lower case, without a trailing dot, in the order written
}

// Problem is a line that yields no record.
type Problem struct {
	Key    string
	Line   int
	Text   string // the line as written, without its comment
	Reason string
}

func (p Problem) Error() string {
	if p.Line == 0 {
		return fmt.Sprintf("data[%s]: %s", p.Key, p.Reason)
	}
	return fmt.Sprintf("data[%s] line %d %q: %s", p.Key, p.Line, p.Text, p.Reason)
}

// maxLineReport bounds the text a Problem quotes.
const maxLineReport = 120

// Parse reads hosts-file text: blank and comment-only lines are skipped,
// every other line must be an address followed by at least one valid name.
// Lines end with "\n" (a "\r" before it is dropped).
func Parse(key, text string) ([]Line, []Problem) {
	var lines []Line
	var problems []Problem
	for i, raw := range strings.Split(text, "\n") {
		content, _, _ := strings.Cut(strings.TrimSuffix(raw, "\r"), "#")
		fields := strings.Fields(content)
		if len(fields) == 0 {
			continue
		}
		l, reason := parseFields(fields)
		if reason != "" {
			problems = append(problems, Problem{Key: key, Line: i + 1, Text: quoteText(content), Reason: reason})
			continue
		}
		l.Key, l.Number = key, i+1
		lines = append(lines, l)
	}
	return lines, problems
}

func parseFields(fields []string) (Line, string) {
	addr, err := netip.ParseAddr(fields[0])
	switch {
	case err != nil:
		return Line{}, fmt.Sprintf("%q is not an IP address", fields[0])
	case addr.Zone() != "":
		return Line{}, fmt.Sprintf("%q has an IPv6 zone, which DNS cannot carry", fields[0])
	case len(fields) == 1:
		return Line{}, "an address without a name"
	}
	l := Line{Addr: addr.Unmap()}
	for _, f := range fields[1:] {
		name := strings.ToLower(strings.TrimSuffix(f, "."))
		if !contract.ValidDomain(name) {
			return Line{}, fmt.Sprintf("%q is not a host name (letters, digits, hyphens and dots)", f)
		}
		l.Names = append(l.Names, name)
	}
	return l, ""
}

func quoteText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxLineReport {
		return s[:maxLineReport] + "..."
	}
	return s
}
