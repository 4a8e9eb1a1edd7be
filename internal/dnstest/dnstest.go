// Package dnstest holds what tests of several packages share to talk DNS
// over real sockets: one exchange with a server (Send, Exchange, Ask), a
// server on 127.0.0.1 that runs until the test ends (Serve, StartServer),
// and the comparison of records with zone-file text (CheckRecords).
package dnstest

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// CheckRecords fails tb unless got holds exactly the records written in
// want (zone-file text), in any order.
func CheckRecords(tb testing.TB, what string, got []dns.RR, want []string) {
	tb.Helper()
	g := make([]string, len(got))
	for i, rr := range got {
		g[i] = rr.String()
	}
	w := make([]string, len(want))
	for i, text := range want {
		rr, err := dns.NewRR(text)
		if err != nil {
			tb.Fatalf("bad expected record %q: %v", text, err)
		}
		w[i] = rr.String()
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		tb.Errorf("%s:\n got: %s\nwant: %s", what, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
	}
}
