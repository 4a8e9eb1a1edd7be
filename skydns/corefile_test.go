package skydns

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
