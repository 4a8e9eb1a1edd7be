package querylog

import (
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestParseClasses(t *testing.T) {
	tests := []struct {
		in   string
		want Classes
	}{
		{"none", None}, {"denial", Denial}, {"error", Error}, {"all", All},
		{"denial,error", Denial | Error}, {"denial, error", Denial | Error},
	}
	for _, tc := range tests {
		if got, err := ParseClasses(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseClasses(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "success", "denial,", "ALL"} {
		if _, err := ParseClasses(bad); err == nil || !strings.Contains(err.Error(), "none, denial, error, all") {
			t.Errorf("ParseClasses(%q) error = %v, want one listing the classes", bad, err)
		}
	}
}

func TestCheckSampleRate(t *testing.T) {
	for _, ok := range []float64{1, 0.5, 1e-6} {
		if err := CheckSampleRate(ok); err != nil {
			t.Errorf("CheckSampleRate(%v) = %v", ok, err)
		}
	}
	for _, bad := range []float64{0, -0.1, 1.5} {
		if err := CheckSampleRate(bad); err == nil {
			t.Errorf("CheckSampleRate(%v) accepted", bad)
		}
	}
}

func TestAnswersFallInTheirClass(t *testing.T) {
	tests := []struct {
		rcode, answers int
		want           Classes
	}{
		{dns.RcodeSuccess, 1, success},
		{dns.RcodeSuccess, 0, Denial},
		{dns.RcodeNameError, 0, Denial},
		{dns.RcodeServerFailure, 0, Error},
		{dns.RcodeRefused, 0, Error},
		{dns.RcodeFormatError, 0, Error},
		{dns.RcodeNotImplemented, 0, Error},
	}
	for _, tc := range tests {
		if got := classOf(tc.rcode, tc.answers); got != tc.want {
			t.Errorf("classOf(%s, %d answers) = %v, want %v", dns.RcodeToString[tc.rcode], tc.answers, got, tc.want)
		}
	}
}

// packedAnswer is an A answer for web.test. with rcode and one record
// unless it is an error.
func packedAnswer(t testing.TB, rcode int) []byte {
	m := new(dns.Msg).SetQuestion("Web.test.", dns.TypeA)
	m.Id = 4242
	m.Response, m.Rcode = true, rcode
	if rcode == dns.RcodeSuccess {
		a, _ := dns.NewRR("web.test. 30 IN A 10.0.0.1")
		m.Answer = append(m.Answer, a)
	}
	out, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var client = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}

func TestAFastPathAnswerIsOneTextLine(t *testing.T) {
	var out strings.Builder
	New(slog.New(slog.NewTextHandler(&out, nil)), All, 1).Wire(client, packedAnswer(t, dns.RcodeSuccess), 3*time.Millisecond)
	want := regexp.MustCompile(`^time=\S+ level=INFO msg=query client=127\.0\.0\.1:5353 proto=udp id=4242 name=Web\.test\. type=A rcode=NOERROR size=\d+ duration=3ms fast=true\n$`)
	if !want.MatchString(out.String()) {
		t.Errorf("line %q does not match %s", out.String(), want)
	}
}

func TestAnswersWithoutALineDoNotAllocate(t *testing.T) {
	resp := packedAnswer(t, dns.RcodeSuccess)
	tests := []struct {
		name    string
		classes Classes
		rate    float64
	}{
		{"an answer of a class not asked for", Denial | Error, 1},
		{"an answer the sample leaves out", All, 1e-12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			l := New(slog.New(slog.NewJSONHandler(&out, nil)), tc.classes, tc.rate)
			if allocs := testing.AllocsPerRun(1000, func() { l.Wire(client, resp, time.Millisecond) }); allocs != 0 {
				t.Errorf("%v allocations per answer, want 0", allocs)
			}
			if out.Len() != 0 {
				t.Errorf("logged %q", out.String())
			}
		})
	}
}

func TestNoneIsNoLogger(t *testing.T) {
	if l := New(slog.New(slog.DiscardHandler), None, 1); l != nil {
		t.Errorf("New(None) = %v, want nil", l)
	}
}

// BenchmarkWire is the cost of one fast-path answer's line in JSON, and of
// one left out by the sample.
func BenchmarkWire(b *testing.B) {
	resp := packedAnswer(b, dns.RcodeSuccess)
	for _, bc := range []struct {
		name string
		rate float64
	}{{"logged", 1}, {"sampled-out", 1e-12}} {
		b.Run(bc.name, func(b *testing.B) {
			l := New(slog.New(slog.NewJSONHandler(io.Discard, nil)), All, bc.rate)
			b.ReportAllocs()
			for b.Loop() {
				l.Wire(client, resp, time.Millisecond)
			}
		})
	}
}

// dotClient is a DNS over TLS client's address as the fast path gives it.
type dotClient struct{ *net.TCPAddr }

func (dotClient) Network() string { return "tls" }

func TestAFastPathAnswerOverTLSIsLoggedAsTCP(t *testing.T) {
	tcp := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}
	for _, c := range []struct {
		client net.Addr
		want   string
	}{{client, "udp"}, {tcp, "tcp"}, {dotClient{tcp}, "tcp"}} {
		var out strings.Builder
		New(slog.New(slog.NewTextHandler(&out, nil)), All, 1).Wire(c.client, packedAnswer(t, dns.RcodeSuccess), time.Millisecond)
		if !strings.Contains(out.String(), " proto="+c.want+" ") {
			t.Errorf("%s client: line %q, want proto=%s", c.client.Network(), out.String(), c.want)
		}
	}
}
