package skydns

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/corefile"
)

// applyCorefile takes the skydns settings of the Corefile that --corefile
// names as flags of fs (on which AddFlags was called), all or none: a
// Corefile kubesky refuses, or one asking for a flag that the command line
// or the environment gives another value, is an error and sets nothing.
func (c *Config) applyCorefile(fs *pflag.FlagSet) error {
	if c.Corefile == "" {
		return nil
	}
	text, err := os.ReadFile(c.Corefile)
	if err != nil {
		return fmt.Errorf("--corefile: %w", err)
	}
	opts := corefile.DefaultOptions()
	opts.ClusterZone = c.Zones[0]
	plan, err := corefile.Read(c.Corefile, text, opts)
	if err == nil {
		err = plan.Err()
	}
	if err != nil {
		return fmt.Errorf("--corefile: %w", err)
	}
	flags := corefileFlags(plan.Settings)
	for _, f := range flags {
		if err := checkGiven(fs, f); err != nil {
			return err
		}
	}
	for _, f := range flags {
		if err := setCorefileFlag(fs, f); err != nil {
			return err
		}
	}
	c.corefileKube2sky = plan.Flags("kube2sky")
	return nil
}

// corefileFlag is one skydns flag a Corefile sets, with all its values.
type corefileFlag struct {
	name   string
	values []string
	line   int
}

// corefileFlags gathers a plan's skydns settings by flag, in order.
func corefileFlags(settings []corefile.Setting) []*corefileFlag {
	var out []*corefileFlag
	byName := map[string]*corefileFlag{}
	for _, s := range settings {
		if s.Daemon != "skydns" {
			continue
		}
		f, ok := byName[s.Flag]
		if !ok {
			f = &corefileFlag{name: s.Flag, line: s.Line}
			byName[s.Flag] = f
			out = append(out, f)
		}
		f.values = append(f.values, s.Value)
	}
	return out
}

// checkGiven refuses a flag the command line or the environment gave
// another value than the Corefile does.
func checkGiven(fs *pflag.FlagSet, f *corefileFlag) error {
	flag := fs.Lookup(f.name)
	if flag == nil {
		return fmt.Errorf("--corefile: line %d sets --%s, which skydns does not have", f.line, f.name)
	}
	if !flag.Changed {
		return nil
	}
	given, want := flag.Value.String(), strings.Join(f.values, ",")
	if slice, ok := flag.Value.(pflag.SliceValue); ok {
		given = strings.Join(slice.GetSlice(), ",")
	}
	if given == want {
		return nil
	}
	where := fmt.Sprintf("line %d", f.line)
	if f.line == 0 {
		where = "CoreDNS's default where it says nothing"
	}
	return fmt.Errorf("--%s: given as %q, but the --corefile asks for %q (%s): give it in one place", f.name, given, want, where)
}

// setCorefileFlag sets a flag not given otherwise to the Corefile's values.
func setCorefileFlag(fs *pflag.FlagSet, f *corefileFlag) error {
	if fs.Lookup(f.name).Changed {
		return nil
	}
	for _, v := range f.values {
		if err := fs.Set(f.name, v); err != nil {
			return fmt.Errorf("--corefile: line %d: --%s=%s: %w", f.line, f.name, v, err)
		}
	}
	return nil
}
