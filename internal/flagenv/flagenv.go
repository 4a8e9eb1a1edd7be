// Package flagenv lets every command-line flag also be set from the
// environment: a flag --dns-addr of a program whose prefix is SKYDNS reads
// SKYDNS_DNS_ADDR when it was not given on the command line. Flags named
// --etcd-* and --clusterset-etcd-* also fall back to the unprefixed variable
// (ETCD_ENDPOINTS, CLUSTERSET_ETCD_ENDPOINTS), so both daemons can share one
// environment for the records' etcd and one for the clusterset's.
package flagenv

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// VarName returns the environment variable a flag is read from under prefix.
func VarName(prefix, flagName string) string {
	name := strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
	if prefix == "" {
		return name
	}
	return prefix + "_" + name
}

// Apply sets every flag of fs not given on the command line from its
// environment variable, if that is set. A value the flag rejects is an error
// naming both the flag and the variable.
func Apply(fs *pflag.FlagSet, prefix string) error {
	var firstErr error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil {
			return
		}
		variable, value, ok := lookup(prefix, f.Name)
		if !ok {
			return
		}
		if err := fs.Set(f.Name, value); err != nil {
			firstErr = fmt.Errorf("invalid value %q for flag --%s (from $%s): %v", value, f.Name, variable, err)
		}
	})
	return firstErr
}

func lookup(prefix, flagName string) (variable, value string, ok bool) {
	variable = VarName(prefix, flagName)
	if value, ok = os.LookupEnv(variable); ok {
		return variable, value, true
	}
	if strings.HasPrefix(flagName, "etcd-") || strings.HasPrefix(flagName, "clusterset-etcd-") {
		variable = VarName("", flagName)
		value, ok = os.LookupEnv(variable)
	}
	return variable, value, ok
}
