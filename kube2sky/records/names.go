package records

import (
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"
)

// HashLabel returns the record label of a value: the FNV-1a 32-bit hash of
// its host and port as 8 hex digits. Port 0 hashes the host alone.
func HashLabel(host string, port int) string {
	h := fnv.New32a()
	h.Write([]byte(host))
	if port != 0 {
		h.Write([]byte{':'})
		h.Write(strconv.AppendInt(nil, int64(port), 10))
	}
	const digits = "0123456789abcdef"
	sum := h.Sum32()
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[sum&0xf]
		sum >>= 4
	}
	return string(b[:])
}

// DashedIP returns the label an endpoint without a hostname is known by: its
// address with dots or colons replaced by hyphens (10-244-1-7, fd00--7).
func DashedIP(addr netip.Addr) string {
	s := addr.String()
	if addr.Is4() {
		return strings.ReplaceAll(s, ".", "-")
	}
	return strings.ReplaceAll(s, ":", "-")
}

// protocolLabel returns the SRV protocol label of a port protocol ("tcp"),
// or "" for a protocol DNS does not know.
func protocolLabel(protocol string) string {
	switch protocol {
	case "", "TCP":
		return "tcp"
	case "UDP":
		return "udp"
	case "SCTP":
		return "sctp"
	}
	return ""
}
