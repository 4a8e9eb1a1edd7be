package skydns

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// TCPLimits bound what TCP clients may hold (docs/skydns.md#hostile-input).
type TCPLimits struct {
	// MaxConnections is how many TCP connections may be open at once; a
	// connection beyond it is reset when accepted (-1: no limit).
	MaxConnections int
	// IdleTimeout is how long a connection may wait for its next query,
	// and how long an answer may wait for a client that does not read,
	// before the connection is closed.
	IdleTimeout time.Duration
	// MaxQueries is how many queries one connection may send before it
	// is closed (-1: no limit).
	MaxQueries int
}

// DefaultTCPLimits are the limits the flags default to: a thousand
// connections, miekg/dns's idle timeout, and no limit on the queries of
// one connection (a pipelining client loses none).
func DefaultTCPLimits() TCPLimits {
	return TCPLimits{MaxConnections: dnsserver.DefaultTCPMaxConnections, IdleTimeout: dnsserver.DefaultTCPIdleTimeout, MaxQueries: -1}
}

func (l *TCPLimits) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&l.MaxConnections, "tcp-max-connections", l.MaxConnections, "TCP connections open at once; one beyond is reset when accepted (-1: no limit)")
	fs.DurationVar(&l.IdleTimeout, "tcp-idle-timeout", l.IdleTimeout, "how long a TCP connection may wait for its next query, or for its client to read an answer, before it is closed")
	fs.IntVar(&l.MaxQueries, "tcp-max-queries", l.MaxQueries, "queries one TCP connection may send before it is closed (-1: no limit)")
}

func (l TCPLimits) validate() error {
	var errs []error
	if l.MaxConnections < 1 && l.MaxConnections != -1 {
		errs = append(errs, fmt.Errorf("--tcp-max-connections: %d: want -1 (no limit) or 1 or more", l.MaxConnections))
	}
	if l.IdleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--tcp-idle-timeout: %s: must be positive", l.IdleTimeout))
	}
	if l.MaxQueries < 1 && l.MaxQueries != -1 {
		errs = append(errs, fmt.Errorf("--tcp-max-queries: %d: want -1 (no limit) or 1 or more", l.MaxQueries))
	}
	return errors.Join(errs...)
}

// apply sets cfg's TCP limits to l.
func (l TCPLimits) apply(cfg *dnsserver.Config) {
	cfg.TCPMaxConnections = l.MaxConnections
	cfg.TCPIdleTimeout = l.IdleTimeout
	cfg.TCPMaxQueries = l.MaxQueries
}

func (l TCPLimits) logValue() slog.Attr {
	return slog.Group("tcp", "max-connections", l.MaxConnections, "idle-timeout", l.IdleTimeout, "max-queries", l.MaxQueries)
}
