package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kubesky/kubesky/internal/gotool"
)

// ourBinaries are the commands whose flags the deploy files, compose files
// and READMEs may use; each is built from ./cmd/<name>.
var ourBinaries = []string{"skydns", "skydns-holder", "kube2sky", "kubesky-demo", "healthcheck"}

// use is one invocation of one of our binaries found in a file.
type use struct {
	where  string   // file and place, for messages
	binary string   // base name of the command
	args   []string // its arguments
}

// subcommand is kubesky-demo's or skydns's subcommand ("" for none).
func (u use) subcommand() string {
	if (u.binary == "kubesky-demo" || u.binary == "skydns") && len(u.args) > 0 && !strings.HasPrefix(u.args[0], "-") {
		return u.args[0]
	}
	return ""
}

// flagNames returns the names of the flags in args: "zone" for --zone=x,
// "q" for -q. Values that follow a flag are not flags.
func flagNames(args []string) []string {
	var names []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if m := flagToken.FindStringSubmatch(a); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

var flagToken = regexp.MustCompile(`^--?([A-Za-z0-9][A-Za-z0-9-]*)(=.*)?$`)

// flagSets builds our binaries once and reads every flag set from --help.
type flagSets struct {
	once sync.Once
	dir  string
	err  error
	mu   sync.Mutex
	sets map[string]map[string]bool // "binary subcommand" -> names and shorthands
}

var binaries flagSets

func (f *flagSets) get(t *testing.T, binary, sub string) map[string]bool {
	t.Helper()
	f.once.Do(f.build)
	if f.err != nil {
		t.Fatal(f.err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := binary + " " + sub
	if set, ok := f.sets[key]; ok {
		return set
	}
	args := []string{"--help"}
	if sub != "" {
		args = []string{sub, "--help"}
	}
	out, err := exec.Command(filepath.Join(f.dir, binary), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", binary, strings.Join(args, " "), err, out)
	}
	set := parseHelp(string(out))
	if len(set) < 2 {
		t.Fatalf("%s %s lists no flags:\n%s", binary, strings.Join(args, " "), out)
	}
	f.sets[key] = set
	return set
}

func (f *flagSets) build() {
	f.sets = map[string]map[string]bool{}
	f.dir, f.err = os.MkdirTemp("", "kubesky-deploy-flags")
	if f.err != nil {
		return
	}
	args := []string{"build", "-o", f.dir + string(filepath.Separator)}
	for _, b := range ourBinaries {
		args = append(args, "./cmd/"+b)
	}
	cmd := gotool.Command(args...)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		f.err = fmt.Errorf("go build: %v\n%s", err, out)
	}
}

// parseHelp collects the flag names and shorthands of pflag's usage text.
func parseHelp(help string) map[string]bool {
	set := map[string]bool{"help": true, "h": true}
	for _, m := range helpLine.FindAllStringSubmatch(help, -1) {
		set[m[2]] = true
		if m[1] != "" {
			set[m[1]] = true
		}
	}
	return set
}

var helpLine = regexp.MustCompile(`(?m)^\s+(?:-([A-Za-z0-9]), )?--([a-z0-9][a-z0-9-]*)`)

// checkUses fails for every flag of uses that its binary does not know.
func checkUses(t *testing.T, uses []use) {
	t.Helper()
	for _, u := range uses {
		set := binaries.get(t, u.binary, u.subcommand())
		for _, name := range flagNames(u.args) {
			if !set[name] {
				t.Errorf("%s: %s %s has no flag --%s", u.where, u.binary, u.subcommand(), name)
			}
		}
	}
}

// binaryOf maps a path or image name to one of our binaries, or "".
func binaryOf(s string) string {
	base := path.Base(strings.TrimSpace(s))
	if i := strings.IndexByte(base, ':'); i >= 0 {
		base = base[:i] // an image tag
	}
	if base == "demo" {
		base = "kubesky-demo" // the image kubesky/demo
	}
	if base == "skydns-node" {
		base = "skydns" // the same command, built without etcd's server
	}
	for _, b := range ourBinaries {
		if base == b {
			return b
		}
	}
	return ""
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}
