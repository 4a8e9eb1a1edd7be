//go:build linux

package nodelocal

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// TableName is the nftables table (family inet) that skydns owns.
const TableName = "kubesky-node-local"

// Ruleset is the notrack table as values: its table, its two base chains
// (prerouting and output, at raw priority) and their rules.
type Ruleset struct {
	Table  *nftables.Table
	Chains []*nftables.Chain
	Rules  []*nftables.Rule
}

// NotrackRuleset is the table that exempts DNS to and from addr:port
// from connection tracking: in each chain, UDP and TCP with destination
// addr:port, and with source addr:port.
func NotrackRuleset(addr netip.AddrPort) Ruleset {
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: TableName}
	rs := Ruleset{Table: t}
	for _, hook := range []struct {
		name string
		hook *nftables.ChainHook
	}{{"prerouting", nftables.ChainHookPrerouting}, {"output", nftables.ChainHookOutput}} {
		c := &nftables.Chain{Name: hook.name, Table: t, Type: nftables.ChainTypeFilter, Hooknum: hook.hook, Priority: nftables.ChainPriorityRaw}
		rs.Chains = append(rs.Chains, c)
		for _, proto := range []byte{unix.IPPROTO_UDP, unix.IPPROTO_TCP} {
			for _, dst := range []bool{true, false} {
				rs.Rules = append(rs.Rules, &nftables.Rule{Table: t, Chain: c, Exprs: notrack(addr, proto, dst)})
			}
		}
	}
	return rs
}

// notrack matches proto packets to addr:port (dst) or from it, and
// exempts them from connection tracking.
func notrack(addr netip.AddrPort, proto byte, dst bool) []expr.Any {
	ipOff, portOff := srcOffsets(addr.Addr())
	if dst {
		ipOff, portOff = dstOffsets(addr.Addr())
	}
	ip := addr.Addr().AsSlice()
	port := binary.BigEndian.AppendUint16(nil, addr.Port())
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{nfproto(addr.Addr())}},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: ipOff, Len: uint32(len(ip))},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ip},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: portOff, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: port},
		&expr.Notrack{},
	}
}

// srcOffsets and dstOffsets are where the source (destination) address
// is in the network header of addr's family, and the port in the UDP or
// TCP header.
func srcOffsets(addr netip.Addr) (ip, port uint32) {
	if addr.Is4() {
		return 12, 0
	}
	return 8, 0
}

func dstOffsets(addr netip.Addr) (ip, port uint32) {
	if addr.Is4() {
		return 16, 2
	}
	return 24, 2
}

func nfproto(addr netip.Addr) byte {
	if addr.Is4() {
		return unix.NFPROTO_IPV4
	}
	return unix.NFPROTO_IPV6
}
