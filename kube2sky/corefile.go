package kube2sky

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/corefile"
)

// applyCorefile takes the kube2sky settings of the Corefile --corefile
// names as flags of fs, all or none, as skydns takes its own: a Corefile
// kubesky refuses, or a flag given another value on the command line or in
// the environment, is an error. The hosts entries' ConfigMap is
// --hosts-configmap when given.
func (c *Config) applyCorefile(fs *pflag.FlagSet) error {
	if c.Corefile == "" {
		return nil
	}
	text, err := os.ReadFile(c.Corefile)
	if err != nil {
		return fmt.Errorf("--corefile: %w", err)
	}
	opts := corefile.DefaultOptions()
	opts.ClusterZone = c.Zone + "."
	if c.HostsConfigMap != "" {
		opts.HostsConfigMap = c.HostsConfigMap
	}
	opts.ReadKey = corefile.KeysIn(filepath.Dir(c.Corefile)) // its ConfigMap's other keys, mounted beside it
	plan, err := corefile.ReadUsable(c.Corefile, text, opts)
	if err != nil {
		return fmt.Errorf("--corefile: %w", err)
	}
	return corefile.ApplyFlags(fs, plan, "kube2sky")
}
