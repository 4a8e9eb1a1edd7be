//go:build linux

package nodelocal

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

func TestTheNotrackTableHasTwoRawChainsOfFourRules(t *testing.T) {
	rs := NotrackRuleset(netip.MustParseAddrPort("169.254.20.10:53"))
	if rs.Table.Name != TableName || rs.Table.Family != nftables.TableFamilyINet {
		t.Fatalf("table %s family %v; want %s inet", rs.Table.Name, rs.Table.Family, TableName)
	}
	hooks := map[string]*nftables.ChainHook{"prerouting": nftables.ChainHookPrerouting, "output": nftables.ChainHookOutput}
	if len(rs.Chains) != 2 {
		t.Fatalf("%d chains, want prerouting and output", len(rs.Chains))
	}
	for _, c := range rs.Chains {
		if *c.Hooknum != *hooks[c.Name] || *c.Priority != *nftables.ChainPriorityRaw || c.Type != nftables.ChainTypeFilter || c.Table != rs.Table {
			t.Errorf("chain %s: hook %v priority %v type %s; want its hook at raw priority, type filter", c.Name, *c.Hooknum, *c.Priority, c.Type)
		}
	}
	if len(rs.Rules) != 8 {
		t.Fatalf("%d rules, want 4 per chain", len(rs.Rules))
	}
}

func TestEachRuleMatchesTheAddressAndPortThenNotracks(t *testing.T) {
	tests := []struct {
		addr          string
		nfproto       byte
		src, dst      uint32 // address offsets in the network header
		addrLen       uint32
		wantAddrBytes []byte
	}{
		{"169.254.20.10:53", unix.NFPROTO_IPV4, 12, 16, 4, []byte{169, 254, 20, 10}},
		{"[fd00::10]:5353", unix.NFPROTO_IPV6, 8, 24, 16, netip.MustParseAddr("fd00::10").AsSlice()},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			ap := netip.MustParseAddrPort(tc.addr)
			port := []byte{byte(ap.Port() >> 8), byte(ap.Port())}
			seen := map[[2]uint32]int{} // {proto, address offset}
			for _, r := range NotrackRuleset(ap).Rules {
				e := r.Exprs
				if len(e) != 9 {
					t.Fatalf("%d expressions, want 9", len(e))
				}
				checkCmp(t, e[1], []byte{tc.nfproto})
				proto := e[3].(*expr.Cmp).Data[0]
				ipLoad, portLoad := e[4].(*expr.Payload), e[6].(*expr.Payload)
				checkCmp(t, e[5], tc.wantAddrBytes)
				checkCmp(t, e[7], port)
				if ipLoad.Len != tc.addrLen || (ipLoad.Offset != tc.src && ipLoad.Offset != tc.dst) || ipLoad.Base != expr.PayloadBaseNetworkHeader {
					t.Errorf("address load %+v", ipLoad)
				}
				wantPort := uint32(2) // destination port with the destination address
				if ipLoad.Offset == tc.src {
					wantPort = 0
				}
				if portLoad.Offset != wantPort || portLoad.Len != 2 || portLoad.Base != expr.PayloadBaseTransportHeader {
					t.Errorf("port load %+v with address offset %d", portLoad, ipLoad.Offset)
				}
				if _, ok := e[8].(*expr.Notrack); !ok {
					t.Errorf("last expression %T, want notrack", e[8])
				}
				seen[[2]uint32{uint32(proto), ipLoad.Offset}]++
			}
			for _, proto := range []uint32{unix.IPPROTO_UDP, unix.IPPROTO_TCP} {
				for _, off := range []uint32{tc.src, tc.dst} {
					if seen[[2]uint32{proto, off}] != 2 {
						t.Errorf("protocol %d, address offset %d: %d rules, want one per chain", proto, off, seen[[2]uint32{proto, off}])
					}
				}
			}
		})
	}
}

func checkCmp(t *testing.T, e expr.Any, want []byte) {
	t.Helper()
	c, ok := e.(*expr.Cmp)
	if !ok || c.Op != expr.CmpOpEq || !bytes.Equal(c.Data, want) {
		t.Errorf("%#v, want == %v", e, want)
	}
}
