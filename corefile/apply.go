package corefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

// DaemonFlag is one flag of a daemon that a Corefile sets, with all its
// values (a repeatable flag has several) and the first line asking for it.
type DaemonFlag struct {
	Name   string
	Values []string
	Line   int
}

// DaemonFlags gathers the settings of daemon by flag, in order.
func DaemonFlags(settings []Setting, daemon string) []*DaemonFlag {
	var out []*DaemonFlag
	byName := map[string]*DaemonFlag{}
	for _, s := range settings {
		if s.Daemon != daemon {
			continue
		}
		f, ok := byName[s.Flag]
		if !ok {
			f = &DaemonFlag{Name: s.Flag, Line: s.Line}
			byName[s.Flag] = f
			out = append(out, f)
		}
		f.Values = append(f.Values, s.Value)
	}
	return out
}

// checkGiven refuses a flag of daemon that the command line or the
// environment (fs's Changed flags) gave another value than the Corefile.
func checkGiven(fs *pflag.FlagSet, f *DaemonFlag, daemon string) error {
	flag := fs.Lookup(f.Name)
	if flag == nil {
		return fmt.Errorf("--corefile: line %d sets --%s, which %s does not have", f.Line, f.Name, daemon)
	}
	if !flag.Changed {
		return nil
	}
	given, want := flag.Value.String(), strings.Join(f.Values, ",")
	if slice, ok := flag.Value.(pflag.SliceValue); ok {
		given = strings.Join(slice.GetSlice(), ",")
	}
	if given == want {
		return nil
	}
	where := fmt.Sprintf("line %d", f.Line)
	if f.Line == 0 {
		where = "CoreDNS's default where it says nothing"
	}
	return fmt.Errorf("--%s: given as %q, but the --corefile asks for %q (%s): give it in one place", f.Name, given, want, where)
}

// SetFlag sets a flag that was not given otherwise to the Corefile's
// values.
func SetFlag(fs *pflag.FlagSet, f *DaemonFlag) error {
	if fs.Lookup(f.Name).Changed {
		return nil
	}
	for _, v := range f.Values {
		if err := fs.Set(f.Name, v); err != nil {
			return fmt.Errorf("--corefile: line %d: --%s=%s: %w", f.Line, f.Name, v, err)
		}
	}
	return nil
}

// ApplyFlags checks every flag the plan sets for daemon against fs, then
// sets those not given otherwise: all or none.
func ApplyFlags(fs *pflag.FlagSet, plan *Plan, daemon string) error {
	flags := DaemonFlags(plan.Settings, daemon)
	for _, f := range flags {
		if err := checkGiven(fs, f, daemon); err != nil {
			return err
		}
	}
	for _, f := range flags {
		if err := SetFlag(fs, f); err != nil {
			return err
		}
	}
	return nil
}

// ReadFileUsable reads the Corefile at path with ReadUsable, its
// ConfigMap's other keys read as the files beside it (where a ConfigMap
// volume mounts them): the plan, the text and the options it was read
// with (for reading it again), or an error naming --corefile.
func ReadFileUsable(path string, opts Options) (*Plan, []byte, Options, error) {
	opts.ReadKey = KeysIn(filepath.Dir(path))
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, opts, fmt.Errorf("--corefile: %w", err)
	}
	plan, err := ReadUsable(path, text, opts)
	if err != nil {
		return nil, nil, opts, fmt.Errorf("--corefile: %w", err)
	}
	return plan, text, opts, nil
}
