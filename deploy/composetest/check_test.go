package composetest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/integration/harness"
)

// startTimeout bounds each wait for a stack to become ready.
const startTimeout = 3 * time.Minute

// expectation is a question and the record data its answer must hold.
type expectation struct {
	name  string
	qtype uint16
	want  []string // the answer's RDATA, in any order
}

// exampleAnswers are the answers the examples must produce.
var exampleAnswers = []expectation{
	{"web.default.svc.cluster.local.", dns.TypeA, []string{"10.96.0.80"}},
	{"_https._tcp.web.default.svc.cluster.local.", dns.TypeSRV, []string{"10 100 443 web.default.svc.cluster.local."}},
	{"db.default.svc.cluster.local.", dns.TypeA, []string{"10.244.1.10", "10.244.2.11"}},
	{"80.0.96.10.in-addr.arpa.", dns.TypePTR, []string{"web.default.svc.cluster.local."}},
	{"10.1.244.10.in-addr.arpa.", dns.TypePTR, []string{"db-0.db.default.svc.cluster.local."}},
}

// check asks addr over UDP (once more over TCP if truncated) and compares
// the answer's data with want; an empty want only asks for an answer.
func check(addr string, e expectation) error { return checkWithin(addr, e, time.Second) }

// checkWithin is check with a timeout for each exchange.
func checkWithin(addr string, e expectation, timeout time.Duration) error {
	m := new(dns.Msg).SetQuestion(e.name, e.qtype)
	resp, _, err := (&dns.Client{Timeout: timeout}).Exchange(m, addr)
	if err == nil && resp.Truncated {
		resp, _, err = (&dns.Client{Net: "tcp", Timeout: timeout}).Exchange(m, addr)
	}
	if err != nil {
		return fmt.Errorf("%s %s at %s: %w", e.name, dns.TypeToString[e.qtype], addr, err)
	}
	got := rdata(resp.Answer)
	if len(got) == 0 || (e.want != nil && !slices.Equal(got, sorted(e.want))) {
		return fmt.Errorf("%s %s at %s: %s %v, want %v", e.name, dns.TypeToString[e.qtype], addr, dns.RcodeToString[resp.Rcode], got, e.want)
	}
	return nil
}

func rdata(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		hdr := rr.Header().String()
		out = append(out, strings.TrimPrefix(rr.String(), hdr))
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// checkAll checks every expectation once.
func checkAll(addr string, es []expectation) error {
	for _, e := range es {
		if err := check(addr, e); err != nil {
			return err
		}
	}
	return nil
}

// waitAnswers polls until every expectation holds at addr.
func waitAnswers(t *testing.T, addr string, es []expectation, timeout time.Duration) {
	t.Helper()
	harness.Eventually(t, timeout, func() error { return checkAll(addr, es) })
}

// httpGet returns the status code and body of url.
func httpGet(ctx context.Context, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(body)), nil
}

// waitHTTP polls url until it answers code with a body containing substr.
func waitHTTP(t *testing.T, url string, code int, substr string, timeout time.Duration) {
	t.Helper()
	harness.Eventually(t, timeout, func() error {
		got, body, err := httpGet(t.Context(), url)
		if err != nil {
			return err
		}
		if got != code || !strings.Contains(body, substr) {
			return fmt.Errorf("GET %s: %d %q, want %d with %q", url, got, body, code, substr)
		}
		return nil
	})
}
