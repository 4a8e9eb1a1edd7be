//go:build linux

package nodelocal

import (
	"fmt"

	"github.com/google/nftables"
)

// applyRuleset replaces the table of rs with rs in one batch: the kernel
// applies all of it or nothing. The table is added first (a no-op if it
// exists) so that deleting it cannot fail, then deleted and built anew.
func applyRuleset(rs Ruleset) error {
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", explain(err))
	}
	conn.AddTable(rs.Table)
	conn.DelTable(rs.Table)
	conn.AddTable(rs.Table)
	for _, c := range rs.Chains {
		conn.AddChain(c)
	}
	for _, r := range rs.Rules {
		conn.AddRule(r)
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("nftables table inet %s: %w", rs.Table.Name, explain(err))
	}
	return nil
}
