//go:build !linux

package fastpath

import "net"

// oobSize is 0: only Linux reports a packet's destination address here.
const oobSize = 0

// wantPacketInfo does nothing off Linux: replies from a socket bound to an
// unspecified address leave from the address the routing table picks.
func wantPacketInfo(*net.UDPConn) (bool, error) { return false, nil }

func replyControl(oob, _ []byte) []byte { return oob[:0] }
