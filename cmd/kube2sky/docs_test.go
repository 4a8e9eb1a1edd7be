package main

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/kubesky/kubesky/kube2sky"
	"github.com/spf13/pflag"
)

var docFlag = regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)` \\|")

// TestTheDocsFlagsTableListsEveryFlag keeps docs/kube2sky.md honest: its
// flags table names exactly the flags the binary has.
func TestTheDocsFlagsTableListsEveryFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/kube2sky.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range docFlag.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	cfg := kube2sky.DefaultConfig()
	fs := newFlagSet(&cfg)
	actual := []string{"version"}
	fs.VisitAll(func(f *pflag.Flag) { actual = append(actual, f.Name) })
	slices.Sort(documented)
	slices.Sort(actual)
	if !slices.Equal(documented, actual) {
		t.Errorf("docs/kube2sky.md flags table:\n %v\nthe binary's flags:\n %v", documented, actual)
	}
}
