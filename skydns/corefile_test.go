package skydns

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// writeCorefile writes text to a Corefile in a temporary directory.
func writeCorefile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTheKubeadmCorefileBecomesSkydnsFlags(t *testing.T) {
	cfg, err := parse("--corefile=../corefile/testdata/kubeadm.Corefile")
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Forward
	if cfg.TTL != 30 || cfg.MaxTTL != 30 || cfg.PodRecords != "insecure" || !cfg.ReverseFallthrough || !cfg.Rotate ||
		cfg.Lameduck != 5*time.Second || !slices.Equal(cfg.Zones, []string{"cluster.local."}) ||
		f.MaxConcurrent != 1000 || f.CacheSize != 19968 || f.CacheMaxNegativeTTL != 30*time.Second || len(f.Upstreams) != 0 {
		t.Fatalf("config from the kubeadm Corefile: %+v", cfg)
	}
	if !slices.Equal(cfg.corefileKube2sky, []string{"--zone=cluster.local", "--pod-records=insecure", "--ttl=30"}) {
		t.Fatalf("kube2sky flags %q", cfg.corefileKube2sky)
	}
}

func TestACorefileStubDomainAndUpstreamsAreTaken(t *testing.T) {
	cfg, err := parse("--corefile=../corefile/testdata/stubdomain.Corefile")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Forward.Upstreams, []string{"172.16.0.1", "172.16.0.2:5353"}) ||
		!slices.Equal(cfg.Forward.StubDomains, []string{"consul.local=10.150.0.1", "corp.example=10.0.0.53,[fd00::53]:5353"}) {
		t.Fatalf("upstreams %q, stub domains %q", cfg.Forward.Upstreams, cfg.Forward.StubDomains)
	}
}

func TestAFlagGivenTwiceMustAgree(t *testing.T) {
	path := writeCorefile(t, ".:53 {\n  kubernetes cluster.local {\n    ttl 30\n  }\n  forward . 10.0.0.1\n}\n")
	if _, err := parse("--corefile="+path, "--ttl=30"); err != nil {
		t.Fatalf("the same value twice: %v", err)
	}
	_, err := parse("--corefile="+path, "--ttl=10")
	want := `--ttl: given as "10", but the --corefile asks for "30" (line 3): give it in one place`
	if err == nil || err.Error() != want {
		t.Fatalf("Parse: %v, want %q", err, want)
	}
	_, err = parse("--corefile="+path, "--rotate=true")
	want = `--rotate: given as "true", but the --corefile asks for "false" (CoreDNS's default where it says nothing): give it in one place`
	if err == nil || err.Error() != want {
		t.Fatalf("Parse: %v, want %q", err, want)
	}
}

func TestARefusedCorefileStopsSkydnsWithOneLine(t *testing.T) {
	cases := []struct{ name, corefile, want string }{
		{"an unknown plugin", ".:53 {\n  forward . 10.0.0.1\n  frobnicate\n}\n", `:3: frobnicate: refused: unknown plugin "frobnicate"`},
		{"a bad option", ".:53 {\n  forward . 10.0.0.1 {\n    max_concurrent none\n  }\n}\n", `:3: max_concurrent none: refused: "none" is not a whole number`},
		{"a syntax error", ".:53 {\n  forward . 10.0.0.1 {\n", ":2 - Error during parsing: Unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeCorefile(t, c.corefile)
			cfg, err := parse("--corefile=" + path)
			if err == nil || !strings.HasPrefix(err.Error(), "--corefile: ") || !strings.Contains(err.Error(), path+c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse: %v, want one line with %q", err, path+c.want)
			}
			if len(cfg.Forward.Upstreams) != 0 {
				t.Fatalf("half applied: upstreams %q", cfg.Forward.Upstreams)
			}
		})
	}
}

func TestAMissingCorefileIsAnError(t *testing.T) {
	if _, err := parse("--corefile=/nonexistent/Corefile"); err == nil || !strings.HasPrefix(err.Error(), "--corefile: open /nonexistent/Corefile") {
		t.Fatalf("Parse: %v", err)
	}
}

// replaceCorefile writes text to path in one rename, as a ConfigMap volume
// changes its files.
func replaceCorefile(t *testing.T, path, text string) {
	t.Helper()
	next := path + ".next"
	if err := os.WriteFile(next, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
}

func TestAReloadIsJudgedWhole(t *testing.T) {
	start := ".:53 {\n  kubernetes cluster.local {\n    ttl 30\n  }\n  forward . 192.0.2.1\n}\n"
	cases := []struct {
		name, corefile string
		args           []string
		upstreams      []string
		stubs          []string
		want           string
	}{
		{"new upstreams", strings.Replace(start, "192.0.2.1", "192.0.2.2 192.0.2.3:5353", 1), nil,
			[]string{"192.0.2.2", "192.0.2.3:5353"}, nil, ""},
		{"a stub domain added", start + "corp.example {\n  forward . 10.0.0.53\n}\n", nil,
			[]string{"192.0.2.1"}, []string{"corp.example=10.0.0.53"}, ""},
		{"the upstreams back to /etc/resolv.conf", strings.Replace(start, "192.0.2.1", "/etc/resolv.conf", 1), nil,
			nil, nil, ""},
		{"another TTL", strings.Replace(start, "ttl 30", "ttl 10", 1), nil,
			nil, nil, "changing --ttl needs a restart of skydns"},
		{"a refused plugin", strings.Replace(start, "  forward", "  whoami\n  forward", 1), nil,
			nil, nil, `:5: whoami: refused: kubesky has no equivalent of CoreDNS's whoami plugin`},
		{"a rewrite rule added", strings.Replace(start, "  forward", "  rewrite name a b\n  forward", 1), nil,
			nil, nil, "changing --rewrite needs a restart of skydns"},
		{"a flag the command line gives", start + "corp.example {\n  forward . 10.0.0.53\n}\n", []string{"--stub-domain=corp.example=10.0.0.53"},
			nil, nil, "changing --stub-domain needs a restart of skydns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parse(append([]string{"--corefile=" + writeCorefile(t, start)}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			fwd, _, err := cfg.corefile.reload([]byte(c.corefile))
			switch {
			case c.want != "":
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("reload: %v, want an error with %q", err, c.want)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(fwd.Upstreams, c.upstreams) || !slices.Equal(fwd.StubDomains, c.stubs):
				t.Fatalf("upstreams %q, stub domains %q; want %q, %q", fwd.Upstreams, fwd.StubDomains, c.upstreams, c.stubs)
			}
		})
	}
}

// TestAChangedCorefileIsAppliedWholeOrNotAtAll runs skydns --corefile and
// changes the file under it, as a ConfigMap edit does.
func TestAChangedCorefileIsAppliedWholeOrNotAtAll(t *testing.T) {
	first, second, stub := fakeUpstream(t, "192.0.2.1"), fakeUpstream(t, "192.0.2.2"), fakeUpstream(t, "192.0.2.3")
	etcd := etcdtest.Start(t)
	path := writeCorefile(t, ".:53 {\n  forward . "+first+"\n}\n")
	cfg, err := parse("--corefile="+path, "--dns-addr=127.0.0.1:0", "--http-addr=127.0.0.1:0", "--etcd-endpoints="+etcd.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.corefileInterval = 10 * time.Millisecond
	logs := &logBuffer{}
	d, err := Start(cfg, slog.New(slog.NewTextHandler(io.MultiWriter(logs, t.Output()), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	n := 0
	answers := func(domain, want string) func() string { // a new name each time: nothing cached
		return func() string {
			n++
			name := fmt.Sprintf("n%d.%s", n, domain)
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), name, dns.TypeA), dns.RcodeSuccess, want)
		}
	}
	polltest.NoComplaint(t, "the first upstream", answers("example.org.", "192.0.2.1"))

	replaceCorefile(t, path, ".:53 {\n  forward . "+second+"\n}\nexample.corp {\n  forward . "+stub+"\n}\n")
	polltest.NoComplaint(t, "the second upstream", answers("example.org.", "192.0.2.2"))
	polltest.NoComplaint(t, "the stub domain", answers("example.corp.", "192.0.2.3"))

	for _, refused := range []struct{ corefile, log string }{
		{".:53 {\n  forward . " + first + "\n  frobnicate\n}\n", `unknown plugin \"frobnicate\"`},
		{".:53 {\n  forward . " + first + "\n  loadbalance\n}\n", "changing --rotate needs a restart of skydns"},
	} {
		replaceCorefile(t, path, refused.corefile)
		polltest.True(t, "the refusal logged", func() bool { return logs.count(refused.log) == 1 })
		if msg := answers("example.org.", "192.0.2.2")(); msg != "" {
			t.Fatalf("after a refused Corefile: %s", msg)
		}
		if msg := answers("example.corp.", "192.0.2.3")(); msg != "" {
			t.Fatalf("after a refused Corefile: %s", msg)
		}
	}
	if logs.count("Corefile refused, keeping the running configuration") != 2 || logs.count("Corefile applied") != 1 {
		t.Fatalf("logs:\n%s", logs)
	}
}
