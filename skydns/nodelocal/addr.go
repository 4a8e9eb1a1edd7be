//go:build linux

package nodelocal

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ensureAddr puts addr (/32 or /128, scope host) on link unless it is
// there already; addr on any other interface is ErrAddressTaken.
func ensureAddr(link netlink.Link, addr netip.Addr) error {
	owner, err := addrOwner(addr)
	if err != nil {
		return fmt.Errorf("listing addresses: %w", explain(err))
	}
	name := link.Attrs().Name
	switch {
	case owner == link.Attrs().Index:
		return nil
	case owner != 0:
		return fmt.Errorf("%w: %s is on interface %s, not %s", ErrAddressTaken, addr, linkName(owner), name)
	}
	err = netlink.AddrAdd(link, hostAddr(addr))
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("adding %s to %s: %w", addr, name, explain(err))
	}
	return nil
}

// addrOwner is the index of the interface that holds addr, 0 if none.
func addrOwner(addr netip.Addr) (int, error) {
	addrs, err := netlink.AddrList(nil, family(addr))
	if err != nil {
		return 0, err
	}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok && ip.Unmap() == addr {
			return a.LinkIndex, nil
		}
	}
	return 0, nil
}

// hostAddr is addr as a single-address prefix of host scope.
func hostAddr(addr netip.Addr) *netlink.Addr {
	bits := addr.BitLen()
	a := &netlink.Addr{IPNet: &net.IPNet{IP: addr.AsSlice(), Mask: net.CIDRMask(bits, bits)}, Scope: unix.RT_SCOPE_HOST}
	if addr.Is6() {
		a.Flags = unix.IFA_F_NODAD // usable at once: a port-less bridge has no carrier for duplicate detection
	}
	return a
}

func family(addr netip.Addr) int {
	if addr.Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}

func linkName(index int) string {
	if l, err := netlink.LinkByIndex(index); err == nil {
		return l.Attrs().Name
	}
	return fmt.Sprintf("#%d", index)
}
