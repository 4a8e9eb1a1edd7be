package skydns

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/corefile"
	"github.com/kubesky/kubesky/skydns/forward"
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
	opts.ReadKey = corefile.KeysIn(filepath.Dir(c.Corefile)) // its ConfigMap's other keys, mounted beside it
	plan, err := corefile.ReadUsable(c.Corefile, text, opts)
	if err != nil {
		return fmt.Errorf("--corefile: %w", err)
	}
	flags := corefileFlags(plan.Settings)
	for _, f := range flags {
		if err := checkGiven(fs, f); err != nil {
			return err
		}
	}
	state := &corefileState{path: c.Corefile, opts: opts, text: text, settings: plan.Settings,
		base: cloneForward(c.Forward), given: map[string]bool{}}
	fs.Visit(func(f *pflag.Flag) { state.given[f.Name] = true })
	for _, f := range flags {
		if err := setCorefileFlag(fs, f); err != nil {
			return err
		}
	}
	c.corefileKube2sky = plan.Flags("kube2sky")
	c.corefile = state
	return nil
}

// corefileState is what a reload of the Corefile is judged against.
type corefileState struct {
	path     string
	opts     corefile.Options
	text     []byte             // the Corefile in use
	settings []corefile.Setting // its settings
	base     forward.Config     // the forwarding flags without the Corefile's
	given    map[string]bool    // the flags given on the command line or in the environment
	readErr  string             // the last error reading the file, logged once
}

// cloneForward copies cfg with slices of its own.
func cloneForward(cfg forward.Config) forward.Config {
	cfg.Upstreams, cfg.AllowRecursion = slices.Clone(cfg.Upstreams), slices.Clone(cfg.AllowRecursion)
	cfg.StubDomains, cfg.ListenAddrs = slices.Clone(cfg.StubDomains), slices.Clone(cfg.ListenAddrs)
	return cfg
}

// reload judges a changed Corefile: it returns the forwarding config to
// run with, or why the one in use stays. Only the forwarder's ReloadFlags
// change while skydns runs; a Corefile changing any other setting, or one
// the command line gives, needs a restart and changes nothing.
func (s *corefileState) reload(text []byte) (forward.Config, []corefile.Setting, error) {
	plan, err := corefile.ReadUsable(s.path, text, s.opts)
	if err != nil {
		return forward.Config{}, nil, err
	}
	var restart []string
	for _, name := range changedFlags(s.settings, plan.Settings) {
		if s.given[name] || !slices.Contains(forward.ReloadFlags, name) {
			restart = append(restart, "--"+name)
		}
	}
	if len(restart) > 0 {
		return forward.Config{}, nil, fmt.Errorf("changing %s needs a restart of skydns", strings.Join(restart, ", "))
	}
	cfg, err := forwardWith(s.base, plan.Settings)
	return cfg, plan.Settings, err
}

// changedFlags are the skydns flags whose values differ between two
// Corefiles' settings, in order.
func changedFlags(old, new []corefile.Setting) []string {
	before, after := flagValues(old), flagValues(new)
	var out []string
	for _, f := range corefileFlags(append(slices.Clone(old), new...)) {
		if before[f.name] != after[f.name] {
			out = append(out, f.name)
		}
	}
	return out
}

// flagValues are the skydns settings' values by flag, repeated ones joined.
func flagValues(settings []corefile.Setting) map[string]string {
	out := map[string]string{}
	for _, f := range corefileFlags(settings) {
		out[f.name] = strings.Join(f.values, "\n")
	}
	return out
}

// forwardWith is base with the settings' ReloadFlags set, as the flags
// would set them.
func forwardWith(base forward.Config, settings []corefile.Setting) (forward.Config, error) {
	cfg := cloneForward(base)
	fs := pflag.NewFlagSet("corefile", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	for _, f := range corefileFlags(settings) {
		if !slices.Contains(forward.ReloadFlags, f.name) {
			continue
		}
		if err := setCorefileFlag(fs, f); err != nil {
			return forward.Config{}, err
		}
	}
	return cfg, cfg.Validate()
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
