package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestReferenceServersAnswerTheZoneFile runs Knot DNS and NSD on the
// configuration the bench writes and checks an A answer, an SRV answer, an
// NXDOMAIN and a NODATA, as skydns gives them.
func TestReferenceServersAnswerTheZoneFile(t *testing.T) {
	for _, s := range []server{serverNamed("knot"), serverNamed("nsd")} {
		t.Run(s.name, func(t *testing.T) {
			if _, err := exec.LookPath(s.name + map[string]string{"knot": "d", "nsd": ""}[s.name]); err != nil {
				t.Skipf("%s is not installed (apt-get install %s): %v", s.name, s.name, err)
			}
			b := zoneBench(t)
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			argv, err := s.argv(b, port, 0)
			if err != nil {
				t.Fatal(err)
			}
			p, err := kubeproc.Start(kubeproc.Spec{Name: s.name, Path: argv[0], Args: argv[1:], Log: filepath.Join(b.work, s.name+".log")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Stop(10 * time.Second) })
			server := addr(port)
			polltest.True(t, s.name+" to answer", func() bool { return answers(server, b.probe, 200*time.Millisecond) == nil })
			checkRcode(t, server, "_http._tcp."+b.probe, dns.TypeSRV, dns.RcodeSuccess, 1)
			checkRcode(t, server, "missing1.ns0.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0)
			checkRcode(t, server, b.probe, dns.TypeAAAA, dns.RcodeSuccess, 0)
		})
	}
}

// zoneBench is a bench with only a zone file of two services.
func zoneBench(t *testing.T) *bench {
	b := &bench{work: t.TempDir(), spec: gendata.Spec{Services: 2}.WithDefaults()}
	svcs := gendata.Generate(b.spec)
	b.zone, b.probe = filepath.Join(b.work, "zone"), svcs[0].FQDN(zone)
	if err := gendata.WriteFile(b.zone, func(w io.Writer) error { return gendata.WriteZone(w, b.spec, svcs) }); err != nil {
		t.Fatal(err)
	}
	return b
}

func checkRcode(t *testing.T, server, name string, qtype uint16, rcode, answers int) {
	t.Helper()
	c := &dns.Client{Timeout: 2 * time.Second}
	resp, _, err := c.Exchange(new(dns.Msg).SetQuestion(name, qtype), server)
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	if resp.Rcode != rcode || len(resp.Answer) != answers {
		t.Errorf("%s %s: %s with %d answers, want %s with %d", name, dns.TypeToString[qtype],
			dns.RcodeToString[resp.Rcode], len(resp.Answer), dns.RcodeToString[rcode], answers)
	}
}
