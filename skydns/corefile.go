package skydns

import (
	"fmt"
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
	opts := corefile.DefaultOptions()
	opts.ClusterZone = c.Zones[0]
	plan, text, opts, err := corefile.ReadFileUsable(c.Corefile, opts)
	if err != nil {
		return err
	}
	state := &corefileState{path: c.Corefile, opts: opts, text: text, settings: plan.Settings,
		base: cloneForward(c.Forward), given: map[string]bool{}}
	fs.Visit(func(f *pflag.Flag) { state.given[f.Name] = true })
	if err := corefile.ApplyFlags(fs, plan, "skydns"); err != nil {
		return err
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
	for _, f := range corefile.DaemonFlags(append(slices.Clone(old), new...), "skydns") {
		if before[f.Name] != after[f.Name] {
			out = append(out, f.Name)
		}
	}
	return out
}

// flagValues are the skydns settings' values by flag, repeated ones joined.
func flagValues(settings []corefile.Setting) map[string]string {
	out := map[string]string{}
	for _, f := range corefile.DaemonFlags(settings, "skydns") {
		out[f.Name] = strings.Join(f.Values, "\n")
	}
	return out
}

// forwardWith is base with the settings' ReloadFlags set, as the flags
// would set them.
func forwardWith(base forward.Config, settings []corefile.Setting) (forward.Config, error) {
	cfg := cloneForward(base)
	fs := pflag.NewFlagSet("corefile", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	for _, f := range corefile.DaemonFlags(settings, "skydns") {
		if !slices.Contains(forward.ReloadFlags, f.Name) {
			continue
		}
		if err := corefile.SetFlag(fs, f); err != nil {
			return forward.Config{}, err
		}
	}
	return cfg, cfg.Validate()
}
