package explain

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Every flag the docs give `kubesky explain` exists.
func TestTheDocumentedCommandsUseRealFlags(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	command := regexp.MustCompile(`(?m)^(?:bin/)?(?:kubesky|kubectl kubesky) explain (?:[^\n]*\\\n)*[^\n]*$`)
	commands := command.FindAllString(string(doc), -1)
	if len(commands) < 2 {
		t.Fatalf("found %d kubesky explain commands in docs/operations.md, want the two examples", len(commands))
	}
	opts := DefaultOptions()
	fs := pflag.NewFlagSet("kubesky", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts.AddFlags(fs)
	flag := regexp.MustCompile(`--([a-z-]+)`)
	for _, c := range commands {
		for _, m := range flag.FindAllStringSubmatch(c, -1) {
			if fs.Lookup(m[1]) == nil {
				t.Errorf("docs/operations.md: %q uses --%s, which kubesky explain does not have", strings.SplitN(c, "\n", 2)[0], m[1])
			}
		}
	}
}
