//go:build linux

package nodelocal

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ensureLink returns the link named name, creating it (a dummy, or an
// empty bridge when the kernel has no dummy driver) if it is missing, and
// sets it up.
func ensureLink(name string, logger *slog.Logger) (netlink.Link, error) {
	link, err := netlink.LinkByName(name)
	if errors.As(err, new(netlink.LinkNotFoundError)) {
		link, err = createLink(name, logger)
	}
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", name, explain(err))
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, fmt.Errorf("setting interface %s up: %w", name, explain(err))
	}
	return link, nil
}

// createLink adds a dummy link named name, or an empty bridge when dummy
// links are not supported, and returns it.
func createLink(name string, logger *slog.Logger) (netlink.Link, error) {
	attrs := netlink.LinkAttrs{Name: name}
	err := netlink.LinkAdd(&netlink.Dummy{LinkAttrs: attrs})
	if noDummyDriver(err) {
		logger.Info("no dummy interfaces in this kernel: holding the node-local address on an empty bridge", "interface", name, "err", err)
		err = netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs})
	}
	if err != nil && !errors.Is(err, unix.EEXIST) { // EEXIST: another process made it meanwhile
		return nil, err
	}
	return netlink.LinkByName(name)
}

// noDummyDriver reports whether err is the kernel saying it cannot make a
// dummy link ("Unknown device type").
func noDummyDriver(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP)
}

// explain adds what to do to a permission error.
func explain(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%w (skydns needs the NET_ADMIN capability in node-local mode)", err)
	}
	return err
}
