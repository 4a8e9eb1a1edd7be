package nodelocal

import (
	"errors"
	"log/slog"
	"net/netip"
)

// Config says what Setup makes on the node.
type Config struct {
	// Interface holds the address (created if missing).
	Interface string
	// Addr is the node-local address and the DNS port.
	Addr netip.AddrPort
	// Notrack adds the nftables table that keeps DNS to and from Addr out
	// of conntrack.
	Notrack bool
	Logger  *slog.Logger
}

// ErrAddressTaken is returned when the node-local address is on another
// interface than the one named.
var ErrAddressTaken = errors.New("address taken")
