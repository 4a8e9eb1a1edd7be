//go:build !linux

package nodelocal

import (
	"errors"
	"log/slog"
	"net/netip"
)

// Config says what Setup makes on the node.
type Config struct {
	Interface string
	Addr      netip.AddrPort
	Notrack   bool
	Logger    *slog.Logger
}

// ErrAddressTaken is returned when the node-local address is on another
// interface than the one named.
var ErrAddressTaken = errors.New("address taken")

// Setup fails: node-local mode needs Linux.
func Setup(Config) error { return errors.New("node-local mode needs Linux") }
