package harness

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// DigResult is what dig printed, parsed.
type DigResult struct {
	Rcode  int      // from the header's status
	Answer []dns.RR // the answer section
	Output string   // dig's whole output
}

// RequireDig fails the test (it does not skip it) when dig is not on PATH.
func RequireDig(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("dig"); err != nil {
		t.Fatal("dig not found: install it (Debian: apt-get install -y bind9-dnsutils; CI's .ci/run does)")
	}
}

// Dig runs the dig command against addr (127.0.0.1:port) over transport
// ("udp" or "tcp") for qname and qtype (such as "A"), and parses its
// status line and answer section.
func Dig(ctx context.Context, addr, transport, qname, qtype string) (*DigResult, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	args := []string{"@" + host, "-p", port, "+tries=1", "+time=2", "+noall", "+comments", "+answer", qname, qtype}
	switch transport {
	case "tcp":
		args = append(args, "+tcp")
	case "udp":
		args = append(args, "+notcp")
	default:
		return nil, fmt.Errorf("transport %q: want udp or tcp", transport)
	}
	out, err := exec.CommandContext(ctx, "dig", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("dig %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return ParseDig(string(out))
}

var digStatus = regexp.MustCompile(`->>HEADER<<-.* status: ([A-Z]+),`)

// ParseDig parses the output of dig +noall +comments +answer: the rcode
// from the header line and each record line of the answer section.
func ParseDig(out string) (*DigResult, error) {
	m := digStatus.FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("dig printed no status line:\n%s", out)
	}
	rcode, ok := dns.StringToRcode[m[1]]
	if !ok {
		return nil, fmt.Errorf("dig status %q is no rcode", m[1])
	}
	res := &DigResult{Rcode: rcode, Output: out}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		rr, err := dns.NewRR(line)
		if err != nil {
			return nil, fmt.Errorf("dig answer line %q: %w", line, err)
		}
		res.Answer = append(res.Answer, rr)
	}
	return res, nil
}
