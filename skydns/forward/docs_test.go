package forward

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// TestDocsListEveryFlag keeps docs/forward.md honest: its flags table names
// exactly the flags AddFlags registers.
func TestDocsListEveryFlag(t *testing.T) {
	text, err := os.ReadFile("../../docs/forward.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z-]+)` \\|").FindAllSubmatch(text, -1) {
		documented = append(documented, string(m[1]))
	}
	var registered []string
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	cfg := DefaultConfig()
	cfg.AddFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) { registered = append(registered, f.Name) })
	slices.Sort(documented)
	slices.Sort(registered)
	if !slices.Equal(documented, registered) {
		t.Errorf("docs/forward.md documents %v, AddFlags registers %v", documented, registered)
	}
}
