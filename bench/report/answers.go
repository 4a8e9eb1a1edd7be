package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AnswersTable shows, per server, the share of each response code by query
// type over all rounds, so a server answering wrongly (SERVFAIL, REFUSED)
// is not mistaken for a fast one; and any problem or note a server has.
func AnswersTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| server | response codes by query type | problems and notes |\n|---|---|---|\n")
	for _, r := range rows {
		notes := r.Notes
		if r.Problem != "" {
			notes = append([]string{"problem: " + r.Problem}, notes...)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Server, rcodeMix(r), valueOr(strings.Join(notes, "; "), "—"))
	}
	return b.String()
}

// rcodeMix formats "A: NOERROR 87.5 %, NXDOMAIN 12.5 %; AAAA: NOERROR 100 %".
func rcodeMix(r Row) string {
	byType := map[string]map[string]int{}
	for _, s := range r.Samples {
		for key, n := range s.Rcodes {
			rcode, qtype, _ := strings.Cut(key, " ")
			if byType[qtype] == nil {
				byType[qtype] = map[string]int{}
			}
			byType[qtype][rcode] += n
		}
	}
	if len(byType) == 0 {
		return "—"
	}
	var parts []string
	for _, qtype := range slices.Sorted(maps.Keys(byType)) {
		parts = append(parts, qtype+": "+shares(byType[qtype]))
	}
	return strings.Join(parts, "; ")
}

func shares(counts map[string]int) string {
	total := 0
	for _, n := range counts {
		total += n
	}
	var parts []string
	for _, rcode := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %.1f %%", rcode, 100*float64(counts[rcode])/float64(total)))
	}
	return strings.Join(parts, ", ")
}

func valueOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
