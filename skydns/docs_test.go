package skydns

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/spf13/pflag"

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
