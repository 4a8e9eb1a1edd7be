package skydns

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/skydns/tap"
)

// DnstapConfig holds the --dnstap flags (docs/skydns.md, "dnstap").
type DnstapConfig struct {
	// Target is "unix:/path" or "tcp:host:port"; empty: no dnstap.
	Target string
	// Identity names this server in the messages (default: the host name).
	Identity string
	// Queue bounds the messages waiting for the reader.
	Queue int
}

// DefaultDnstapConfig is dnstap off, with tap.DefaultQueue.
func DefaultDnstapConfig() DnstapConfig { return DnstapConfig{Queue: tap.DefaultQueue} }

// AddFlags registers the --dnstap* flags.
func (c *DnstapConfig) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Target, "dnstap", c.Target, "send dnstap messages of every answer and forwarded query to a reader at unix:/path/to/socket or tcp:host:port (empty: off)")
	fs.StringVar(&c.Identity, "dnstap-identity", c.Identity, "identity of this server in the dnstap messages (default: the host name)")
	fs.IntVar(&c.Queue, "dnstap-queue", c.Queue, "dnstap messages waiting for the reader at most; more are dropped and counted (skydns_dnstap_dropped_total)")
}

// validate checks the flags.
func (c DnstapConfig) validate() error {
	if c.Queue < 1 {
		return fmt.Errorf("--dnstap-queue %d: must be 1 or more", c.Queue)
	}
	if c.Target == "" {
		return nil
	}
	if _, _, err := tap.ParseTarget(c.Target); err != nil {
		return fmt.Errorf("--dnstap %q: %w", c.Target, err)
	}
	return nil
}

// config is the tap's Config.
func (c DnstapConfig) config(version string) tap.Config {
	return tap.Config{Target: c.Target, Identity: c.Identity, Version: version, Queue: c.Queue}
}
