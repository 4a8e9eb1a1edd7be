package skydns

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/miekg/dns"
	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/resolver"
)

// TestDocsNameEveryFlagAndMetric keeps docs/skydns.md honest: every flag
// it names exists, every flag exists in it, and so do the metrics.
func TestDocsNameEveryFlagAndMetric(t *testing.T) {
	raw, err := os.ReadFile("../docs/skydns.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("skydns", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	fs.Bool("version", false, "") // registered by cmd/skydns
	fs.Bool("help", false, "")    // built into pflag
	t.Run("every flag in the docs exists", func(t *testing.T) {
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)").FindAllStringSubmatch(doc, -1) {
			if !strings.HasSuffix(m[1], "-") && fs.Lookup(m[1]) == nil { // "--etcd-*" is a family
				t.Errorf("docs name --%s, which is not a flag", m[1])
			}
		}
	})
	t.Run("every flag is in the docs", func(t *testing.T) {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if !strings.Contains(doc, "`--"+f.Name+"`") {
				t.Errorf("--%s is not documented", f.Name)
			}
		})
	})
	t.Run("every metric is in the docs", func(t *testing.T) {
		m := NewMetrics(func() float64 { return 0 })
		res, err := resolver.New(resolver.Config{Zones: []string{"test."}})
		if err != nil {
			t.Fatal(err)
		}
		m.startAnswers(res)
		m.exportAnswers("127.0.0.1:53")
		m.clustersetObserver()(etcdstore.State{})
		q := new(dns.Msg).SetQuestion("a.test.", dns.TypeA)
		m.observeExchange(dnsserver.Exchange{Proto: "udp", Request: q, Response: q}) // vectors show once used
		families, err := m.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if name := f.GetName(); strings.HasPrefix(name, "skydns_") && !strings.Contains(doc, "`"+name) {
				t.Errorf("metric %s is not documented", name)
			}
		}
	})
}

// TestReadmeIsReadInOneSitting keeps the README short: what it is, the
// commands, the contract, recipes and one figures table; the rest lives in
// docs/.
func TestReadmeIsReadInOneSitting(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCount(raw); n > 12000 {
		t.Errorf("README.md has %d characters, want at most 12000: move detail into docs/", n)
	}
}

// TestDocsAreReadInOneSitting keeps docs/ small enough for a newcomer:
// at most 110,000 characters in all and 15,000 in one page. Measurements
// live in bench/results/ and are linked.
func TestDocsAreReadInOneSitting(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	total := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		n := utf8.RuneCount(raw)
		total += n
		if n > 15000 {
			t.Errorf("%s has %d characters, want at most 15,000: move measurements to bench/results/", filepath.Base(page), n)
		}
	}
	if total > 110000 {
		t.Errorf("docs/ has %d characters in %d pages, want at most 110,000", total, len(pages))
	}
}

// TestReadmeFiguresComeFromTheLatestBenchResults checks that every cell of
// the README's figures table is the cell of the same server and column in
// the Serving table of bench/results/latest.md, so the README never shows a
// figure of an older run.
func TestReadmeFiguresComeFromTheLatestBenchResults(t *testing.T) {
	readme := readTable(t, "../README.md", "## Figures")
	latest := readTable(t, "../bench/results/latest.md", "## Serving")
	if len(readme) < 2 {
		t.Fatal("README.md's Figures section has no table with a row")
	}
	columns := map[string]int{}
	for i, name := range latest[0] {
		if _, seen := columns[name]; !seen {
			columns[name] = i
		}
	}
	rows := map[string][]string{}
	for _, row := range latest[1:] {
		rows[row[0]] = row
	}
	for _, row := range readme[1:] {
		want, ok := rows[row[0]]
		if !ok {
			t.Errorf("README figures name server %q, which latest.md does not measure", row[0])
			continue
		}
		for i, cell := range row {
			col, ok := columns[readme[0][i]]
			switch {
			case !ok:
				t.Errorf("README figures column %q is not a column of latest.md", readme[0][i])
			case want[col] != cell:
				t.Errorf("README figures %s / %s = %q, latest.md says %q", row[0], readme[0][i], cell, want[col])
			}
		}
	}
}

// readTable returns the cells of the first Markdown table after the line
// heading in path (the header row first, the separator row left out).
func readTable(t *testing.T, path, heading string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(raw), "\n"+heading+"\n")
	if !found {
		t.Fatalf("%s has no %q section", path, heading)
	}
	var table [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(table) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !strings.HasPrefix(cells[0], "---") {
			table = append(table, cells)
		}
	}
	return table
}
