package report

import (
	"fmt"
	"strings"
)

// BreakdownTable shows where each server's instructions per query go, one
// column per server that has a breakdown, categories in the given order.
func BreakdownTable(rows []Row, categories []string) string {
	var cols []Row
	for _, r := range rows {
		if r.Breakdown != nil {
			cols = append(cols, r)
		}
	}
	if len(cols) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| instructions/query spent in |")
	for _, c := range cols {
		b.WriteString(" " + c.Server + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(cols)) + "\n")
	for _, cat := range append(categories, "total") {
		b.WriteString("| " + cat + " |")
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", count(breakdownValue(c.Breakdown, cat)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func breakdownValue(m map[string]float64, cat string) float64 {
	if cat != "total" {
		return m[cat]
	}
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}
