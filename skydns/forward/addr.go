package forward

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// parseServer reads an upstream address: "ip" (port 53) or "ip:port".
// Names are not accepted: resolving them would need the resolver being set up.
func parseServer(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 {
			return netip.AddrPort{}, errors.New("port 0 is not a server port")
		}
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.AddrPort{}, errors.New("not an IP address or ip:port")
	}
	return netip.AddrPortFrom(addr.Unmap(), 53), nil
}

// parseListen reads a listen address like ":53", "0.0.0.0:53" or
// "10.96.0.10:53"; an empty host is the unspecified address.
func parseListen(s string) (netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port %q is not a number from 0 to 65535", portText)
	}
	addr := netip.IPv6Unspecified()
	if host != "" {
		if addr, err = netip.ParseAddr(host); err != nil {
			return netip.AddrPort{}, fmt.Errorf("host %q is not an IP address", host)
		}
	}
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// ParsePrefix reads a CIDR, or a single address standing for itself.
func ParsePrefix(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, errors.New("not a CIDR (10.0.0.0/8) or an IP address")
	}
	addr = addr.Unmap()
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}

// stubFlag is one --stub-domain value.
type stubFlag struct {
	domain  string
	servers []netip.AddrPort
}

// parseStubFlag reads "domain=ip[:port][,ip[:port]...]".
func parseStubFlag(s string) (stubFlag, error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok {
		return stubFlag{}, errors.New("want domain=ip[:port][,ip[:port]...]")
	}
	domain, err := stubDomain(name)
	if err != nil {
		return stubFlag{}, err
	}
	sf := stubFlag{domain: domain}
	for _, v := range strings.Split(list, ",") {
		ap, err := parseServer(strings.TrimSpace(v))
		if err != nil {
			return stubFlag{}, fmt.Errorf("server %q: %w", v, err)
		}
		sf.servers = append(sf.servers, ap)
	}
	return sf, nil
}

// stubDomain returns name as a lower-case FQDN, refusing the root (that is
// what --upstream is for) and anything that is not a domain name.
func stubDomain(name string) (string, error) {
	name = strings.ToLower(dns.Fqdn(strings.TrimSpace(name)))
	if _, ok := dns.IsDomainName(name); !ok || name == "." {
		return "", fmt.Errorf("domain %q is not a domain name below the root", name)
	}
	return name, nil
}
