package transfer

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubesky/kubesky/skydns/forward"
)

// ACL is the client networks allowed to transfer the zones. An empty ACL
// allows no one.
type ACL []netip.Prefix

// ParseACL parses entries, each an IP address or a CIDR ("10.0.0.0/8",
// "fd00::/8", "192.0.2.7").
func ParseACL(entries []string) (ACL, error) {
	var acl ACL
	for _, entry := range entries {
		entry = strings.TrimSpace(entry)
		p, err := forward.ParsePrefix(entry)
		if err != nil || strings.Contains(entry, "%") { // a zoned address names no network
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR like 10.0.0.0/8", entry)
		}
		acl = append(acl, p)
	}
	return acl, nil
}

// Allows reports whether client may transfer.
func (a ACL) Allows(client netip.Addr) bool {
	client = client.Unmap()
	for _, p := range a {
		if p.Contains(client) {
			return true
		}
	}
	return false
}

// DefaultNotifyPort is the port of a NOTIFY target given without one.
const DefaultNotifyPort = "53"

// ParseTargets parses NOTIFY targets, each an IP address with an optional
// port ("192.0.2.7", "192.0.2.7:5353", "[fd00::7]:53"), into host:port.
// Host names are refused: resolving them would make NOTIFY depend on DNS.
func ParseTargets(entries []string) ([]string, error) {
	var out []string
	for _, entry := range entries {
		target, err := parseTarget(strings.TrimSpace(entry))
		if err != nil {
			return nil, err
		}
		out = append(out, target)
	}
	return out, nil
}

func parseTarget(entry string) (string, error) {
	if addr, err := netip.ParseAddr(entry); err == nil && addr.Zone() == "" {
		return net.JoinHostPort(addr.Unmap().String(), DefaultNotifyPort), nil
	}
	host, port, err := net.SplitHostPort(entry)
	if err != nil {
		return "", fmt.Errorf("%q is not an IP address or IP:port", entry)
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || addr.Zone() != "" {
		return "", fmt.Errorf("host %q in %q is not an IP address", host, entry)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 || port != strconv.FormatUint(n, 10) {
		return "", fmt.Errorf("port %q in %q is not a number 1-65535", port, entry)
	}
	return net.JoinHostPort(addr.Unmap().String(), port), nil
}
