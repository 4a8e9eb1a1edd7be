package forward

import (
	"context"
	"strings"

	"github.com/miekg/dns"
)

// ResolveExternal resolves an out-of-zone CNAME target (an ExternalName
// service's name) through the stub domains, the cache and the upstreams,
// for the server to complete an in-zone CNAME answer: the reply is the CNAME
// followed by these records. It returns the target's answer records (a
// CNAME chain and the final records, TTLs aged) and the rcode to answer
// with: NXDOMAIN for a target that does not exist, SERVFAIL when no
// upstream answered. It does not check the ACL; see RecursionAllowed.
func (f *Forwarder) ResolveExternal(ctx context.Context, target string, qtype uint16) ([]dns.RR, int) {
	q := question{name: strings.ToLower(dns.Fqdn(target)), qtype: qtype, qclass: dns.ClassINET}
	m, err := f.resolve(ctx, q)
	if err != nil {
		f.metrics.servfail.Inc()
		return nil, dns.RcodeServerFailure
	}
	return m.Answer, m.Rcode
}
