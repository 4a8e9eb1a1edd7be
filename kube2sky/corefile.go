package kube2sky

import (
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
	opts := corefile.DefaultOptions()
	opts.ClusterZone = c.Zone + "."
	if c.HostsConfigMap != "" {
		opts.HostsConfigMap = c.HostsConfigMap
	}
	plan, _, _, err := corefile.ReadFileUsable(c.Corefile, opts)
	if err != nil {
		return err
	}
	return corefile.ApplyFlags(fs, plan, "kube2sky")
}
