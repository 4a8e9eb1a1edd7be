package contract

import (
	"net/netip"
	"strconv"
	"strings"
)

// DefaultPrefix is the key prefix SkyDNS and CoreDNS's etcd plugin use.
const DefaultPrefix = "/skydns"

// Key returns the etcd key of a DNS name under prefix: the name's labels
// lower-cased and reversed. Key("/skydns", "Web.default.svc.cluster.local.")
// is "/skydns/local/cluster/svc/default/web". The root name maps to prefix.
func Key(prefix, name string) string {
	labels := Labels(name)
	var b strings.Builder
	b.Grow(len(prefix) + len(name) + 1)
	b.WriteString(strings.TrimSuffix(prefix, "/"))
	for i := len(labels) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(labels[i])
	}
	return b.String()
}

// ApexName is the name whose key holds a zone apex's own records, as
// skydns answers them: "apex.dns.<zone>". The zone's key itself is the
// whole zone's subtree.
func ApexName(zone string) string { return "apex.dns." + zone }

// Name returns the fully qualified DNS name a key under prefix stands for;
// it is Key's inverse. A key outside prefix returns "" and false.
func Name(prefix, key string) (string, bool) {
	prefix = strings.TrimSuffix(prefix, "/")
	if key == prefix {
		return ".", true
	}
	rest, ok := strings.CutPrefix(key, prefix+"/")
	if !ok || rest == "" {
		return "", false
	}
	segments := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	var b strings.Builder
	b.Grow(len(rest) + 1)
	for i := len(segments) - 1; i >= 0; i-- {
		b.WriteString(segments[i])
		b.WriteByte('.')
	}
	return b.String(), true
}

// Labels splits a DNS name into lower-case labels, ignoring a trailing dot.
// The root name has no labels.
func Labels(name string) []string {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" {
		return nil
	}
	return strings.Split(name, ".")
}

// IsWildcard reports whether a query label matches any one label.
func IsWildcard(label string) bool {
	return label == "*" || label == "any"
}

// MatchKey reports whether key matches pattern segment by segment, where a
// wildcard segment in pattern matches any one segment of key. Both have the
// same prefix; key may extend below pattern (a subtree match).
func MatchKey(pattern, key string) bool {
	ps := strings.Split(pattern, "/")
	ks := strings.Split(key, "/")
	if len(ks) < len(ps) {
		return false
	}
	for i, p := range ps {
		if p != ks[i] && !IsWildcard(p) {
			return false
		}
	}
	return true
}

// ReverseName returns the PTR owner name of an address:
// 10.96.0.1 -> "1.0.96.10.in-addr.arpa.", and for IPv6 the ip6.arpa name of
// its 32 nibbles, least significant first.
func ReverseName(addr netip.Addr) string {
	addr = addr.Unmap()
	var b strings.Builder
	if addr.Is4() {
		a := addr.As4()
		for i := 3; i >= 0; i-- {
			b.WriteString(strconv.Itoa(int(a[i])))
			b.WriteByte('.')
		}
		b.WriteString("in-addr.arpa.")
		return b.String()
	}
	const hexDigits = "0123456789abcdef"
	a := addr.As16()
	for i := 15; i >= 0; i-- {
		b.WriteByte(hexDigits[a[i]&0xf])
		b.WriteByte('.')
		b.WriteByte(hexDigits[a[i]>>4])
		b.WriteByte('.')
	}
	b.WriteString("ip6.arpa.")
	return b.String()
}

// ReverseKey returns the etcd key of an address's PTR record under prefix.
func ReverseKey(prefix string, addr netip.Addr) string {
	return Key(prefix, ReverseName(addr))
}

// AddrFromReverse parses a complete in-addr.arpa or ip6.arpa name back into
// the address it stands for.
func AddrFromReverse(name string) (netip.Addr, bool) {
	labels := Labels(name)
	switch {
	case len(labels) == 6 && labels[4] == "in-addr" && labels[5] == "arpa":
		return parseReverse4(labels[:4])
	case len(labels) == 34 && labels[32] == "ip6" && labels[33] == "arpa":
		return parseReverse6(labels[:32])
	}
	return netip.Addr{}, false
}

func parseReverse4(labels []string) (netip.Addr, bool) {
	var a [4]byte
	for i, l := range labels {
		n, err := strconv.ParseUint(l, 10, 8)
		if err != nil || (len(l) > 1 && l[0] == '0') {
			return netip.Addr{}, false
		}
		a[3-i] = byte(n)
	}
	return netip.AddrFrom4(a), true
}

func parseReverse6(labels []string) (netip.Addr, bool) {
	var a [16]byte
	for i, l := range labels {
		n, err := strconv.ParseUint(l, 16, 4)
		if err != nil || len(l) != 1 {
			return netip.Addr{}, false
		}
		byteIndex := 15 - i/2
		if i%2 == 0 {
			a[byteIndex] |= byte(n)
		} else {
			a[byteIndex] |= byte(n) << 4
		}
	}
	return netip.AddrFrom16(a), true
}
