package skydns

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/skydns/forward"
	"github.com/kubesky/kubesky/skydns/rrl"
)

// RRLConfig holds the response rate limiting flags (docs/skydns.md,
// "Response rate limiting").
type RRLConfig struct {
	// ResponsesPerSecond per client network over UDP; 0 turns RRL off.
	ResponsesPerSecond int
	// Slip: every Slip-th limited answer goes out truncated (TC=1).
	Slip int
	// IPv4PrefixLen and IPv6PrefixLen group clients into networks.
	IPv4PrefixLen, IPv6PrefixLen int
	// Exempt are client CIDRs never limited.
	Exempt []string
}

// DefaultRRLConfig is RRL off, and when turned on, /24 and /56 networks,
// every second limited answer slipped, and the in-cluster ranges (those
// of --allow-recursion's default) exempt.
func DefaultRRLConfig() RRLConfig {
	return RRLConfig{Slip: 2, IPv4PrefixLen: 24, IPv6PrefixLen: 56,
		Exempt: append([]string(nil), forward.DefaultAllowRecursion...)}
}

// AddFlags registers the --rrl-* flags.
func (c *RRLConfig) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&c.ResponsesPerSecond, "rrl-responses-per-second", c.ResponsesPerSecond,
		"UDP answers per second to one client network outside --rrl-exempt; more are dropped or slipped (0: no limit)")
	fs.IntVar(&c.Slip, "rrl-slip", c.Slip,
		"every N-th answer over the limit goes out empty with TC=1, so real clients retry over TCP (0: drop them all)")
	fs.IntVar(&c.IPv4PrefixLen, "rrl-ipv4-prefix-length", c.IPv4PrefixLen, "IPv4 clients sharing a limit: the prefix length of their network")
	fs.IntVar(&c.IPv6PrefixLen, "rrl-ipv6-prefix-length", c.IPv6PrefixLen, "IPv6 clients sharing a limit: the prefix length of their network")
	fs.StringSliceVar(&c.Exempt, "rrl-exempt", c.Exempt, "client CIDRs never rate limited (default: loopback and the private ranges)")
}

// Limiter checks c and returns its Limiter, nil when RRL is off.
func (c RRLConfig) Limiter() (*rrl.Limiter, error) {
	var errs []error
	if c.ResponsesPerSecond < 0 || c.Slip < 0 {
		errs = append(errs, fmt.Errorf("--rrl-responses-per-second %d and --rrl-slip %d: must be 0 or more", c.ResponsesPerSecond, c.Slip))
	}
	if c.IPv4PrefixLen < 0 || c.IPv4PrefixLen > 32 {
		errs = append(errs, fmt.Errorf("--rrl-ipv4-prefix-length %d: must be 0 to 32", c.IPv4PrefixLen))
	}
	if c.IPv6PrefixLen < 0 || c.IPv6PrefixLen > 128 {
		errs = append(errs, fmt.Errorf("--rrl-ipv6-prefix-length %d: must be 0 to 128", c.IPv6PrefixLen))
	}
	exempt := make([]netip.Prefix, 0, len(c.Exempt))
	for _, s := range c.Exempt {
		p, err := forward.ParsePrefix(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--rrl-exempt %q: %w", s, err))
		}
		exempt = append(exempt, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rrl.New(rrl.Config{ResponsesPerSecond: c.ResponsesPerSecond, Slip: c.Slip,
		IPv4PrefixLen: c.IPv4PrefixLen, IPv6PrefixLen: c.IPv6PrefixLen, Exempt: exempt}), nil
}
