package forward

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/miekg/dns"
)

// defaultUpstreams returns the nameservers of a resolv.conf file that are
// not this server itself.
func defaultUpstreams(path string, listen []netip.AddrPort) ([]netip.AddrPort, error) {
	cc, err := dns.ClientConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading default upstreams: %w", err)
	}
	var servers []netip.AddrPort
	for _, s := range cc.Servers {
		if ap, err := parseServer(net.JoinHostPort(s, cc.Port)); err == nil {
			servers = append(servers, ap)
		}
	}
	return withoutSelf(servers, listen, localAddrs()), nil
}

// withoutSelf drops the servers that are this server: a listen address
// itself, or, when listening on the unspecified address, any loopback or
// local interface address on the listen port.
func withoutSelf(servers, listen []netip.AddrPort, local []netip.Addr) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range servers {
		if !isSelf(s, listen, local) {
			out = append(out, s)
		}
	}
	return out
}

func isSelf(server netip.AddrPort, listen []netip.AddrPort, local []netip.Addr) bool {
	addr := server.Addr().Unmap().WithZone("")
	for _, l := range listen {
		if l.Port() != server.Port() {
			continue
		}
		if l.Addr() == addr {
			return true
		}
		if l.Addr().IsUnspecified() && isLocal(addr, local) {
			return true
		}
	}
	return false
}

func isLocal(addr netip.Addr, local []netip.Addr) bool {
	if addr.IsLoopback() || addr.IsUnspecified() {
		return true
	}
	for _, l := range local {
		if l == addr {
			return true
		}
	}
	return false
}

// localAddrs lists the addresses of this host's interfaces; on error it
// returns none, and only loopback counts as local.
func localAddrs() []netip.Addr {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range ifaddrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}
