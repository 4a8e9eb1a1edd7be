package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/integration/harness"
)

// expectTimeout is how long an expectation is polled before it fails: it
// covers kube2sky's and skydns's propagation and the EndpointSlice
// controller's batching.
const expectTimeout = 30 * time.Second

// reply is the part of a DNS reply an expectation looks at.
type reply struct {
	rcode     int
	truncated bool
	answer    []dns.RR
	authority []dns.RR
}

// ask sends the expectation's question over transport with its client.
func ask(ctx context.Context, dnsAddr string, e expectation, transport string) (reply, error) {
	if e.client() == clientDig {
		res, err := harness.Dig(ctx, dnsAddr, transport, e.Qname, e.Qtype)
		if err != nil {
			return reply{}, err
		}
		return reply{rcode: res.Rcode, answer: res.Answer}, nil
	}
	m, err := harness.Query(dnsAddr, transport, e.Qname, dns.StringToType[e.Qtype])
	if err != nil {
		return reply{}, err
	}
	return reply{rcode: m.Rcode, truncated: m.Truncated, answer: m.Answer, authority: m.Ns}, nil
}

// check asks once and returns an error describing every difference from
// the expectation.
func check(ctx context.Context, dnsAddr string, e expectation, transport string) error {
	r, err := ask(ctx, dnsAddr, e, transport)
	if err != nil {
		return err
	}
	var diffs []string
	if got := dns.RcodeToString[r.rcode]; got != e.rcode() {
		diffs = append(diffs, fmt.Sprintf("rcode %s, want %s", got, e.rcode()))
	}
	if e.Truncated != nil && r.truncated != *e.Truncated {
		diffs = append(diffs, fmt.Sprintf("TC bit %v, want %v", r.truncated, *e.Truncated))
	}
	if e.Answer != nil {
		diffs = append(diffs, diffSets("answer", rrStrings(r.answer), normalizeAnswer(*e.Answer))...)
	}
	if e.Rdata != nil {
		diffs = append(diffs, diffSets("rdata", rdataStrings(r.answer), lower(*e.Rdata))...)
	}
	if e.Authority != nil {
		diffs = append(diffs, diffSets("authority types", rrTypes(r.authority), e.Authority)...)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s over %s: %s\nreply answer:\n%s", e, transport, strings.Join(diffs, "; "), strings.Join(rrStrings(r.answer), "\n"))
	}
	return nil
}

// rrStrings renders records in zone-file text, lower case, so that names
// compare without regard to case.
func rrStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = strings.ToLower(rr.String())
	}
	return out
}

// rdataStrings renders the data part of each record: "10.96.0.1",
// "10 100 80 web.default.svc.cluster.local.".
func rdataStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = strings.ToLower(strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	return out
}

func rrTypes(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = dns.TypeToString[rr.Header().Rrtype]
	}
	return out
}

// normalizeAnswer parses zone-file lines (validated when the file was
// loaded) and renders them as rrStrings does.
func normalizeAnswer(lines []string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		rr, _ := dns.NewRR(line)
		out[i] = strings.ToLower(rr.String())
	}
	return out
}

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(strings.TrimSpace(s))
	}
	return out
}

// diffSets compares two multisets of strings and describes what is
// missing and what is extra.
func diffSets(what string, got, want []string) []string {
	missing, extra := multisetDiff(got, want)
	var diffs []string
	if len(missing) > 0 {
		diffs = append(diffs, fmt.Sprintf("%s lacks %q", what, missing))
	}
	if len(extra) > 0 {
		diffs = append(diffs, fmt.Sprintf("%s has unexpected %q", what, extra))
	}
	return diffs
}

// multisetDiff returns the elements of want missing from got and the
// elements of got not in want, counting repeats.
func multisetDiff(got, want []string) (missing, extra []string) {
	left := slices.Clone(got)
	for _, w := range want {
		if i := slices.Index(left, w); i >= 0 {
			left = slices.Delete(left, i, i+1)
		} else {
			missing = append(missing, w)
		}
	}
	return missing, left
}
