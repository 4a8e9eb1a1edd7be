package harness

import (
	"fmt"
	"time"

	"github.com/miekg/dns"
)

// QueryTimeout bounds one DNS exchange of Query.
const QueryTimeout = 2 * time.Second

// Transports are the DNS transports Query and Dig speak.
var Transports = []string{"udp", "tcp"}

// Query asks addr one question over transport ("udp" or "tcp") with the
// recursion-desired bit set, as a stub resolver would, and returns the
// reply. A reply with another ID or question is an error.
func Query(addr, transport, qname string, qtype uint16) (*dns.Msg, error) {
	if transport != "udp" && transport != "tcp" {
		return nil, fmt.Errorf("transport %q: want udp or tcp", transport)
	}
	req := new(dns.Msg)
	req.SetQuestion(dns.Fqdn(qname), qtype)
	client := &dns.Client{Net: transport, Timeout: QueryTimeout}
	reply, _, err := client.Exchange(req, addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s over %s to %s: %w", qname, dns.TypeToString[qtype], transport, addr, err)
	}
	return reply, nil
}
