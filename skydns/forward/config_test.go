package forward

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
)

func parseFlags(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func TestFlags(t *testing.T) {
	t.Run("the defaults are valid", func(t *testing.T) {
		cfg, err := parseFlags(t)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CacheSize != 10000 || cfg.CacheMaxNegativeTTL != 30*time.Second || cfg.ForwardTimeout != 2*time.Second ||
			!slices.Equal(cfg.AllowRecursion, DefaultAllowRecursion) {
			t.Errorf("defaults %+v", cfg)
		}
	})

	t.Run("upstreams are repeatable and comma separated, stub domains repeatable", func(t *testing.T) {
		cfg, err := parseFlags(t, "--upstream=127.0.0.1,127.0.0.1:5353", "--upstream", "::1",
			"--stub-domain", "example.corp=127.0.0.1:53,127.0.0.2", "--stub-domain", "other.corp=127.0.0.3")
		if err != nil {
			t.Fatal(err)
		}
		p, _ := cfg.parse()
		want := []netip.AddrPort{
			netip.MustParseAddrPort("127.0.0.1:53"), netip.MustParseAddrPort("127.0.0.1:5353"), netip.MustParseAddrPort("[::1]:53"),
		}
		if !slices.Equal(p.upstreams, want) {
			t.Errorf("upstreams %v, want %v", p.upstreams, want)
		}
		if len(p.stubs["example.corp."]) != 2 || len(p.stubs["other.corp."]) != 1 {
			t.Errorf("stubs %v", p.stubs)
		}
	})

	bad := []struct {
		name string
		args []string
		flag string
	}{
		{"an upstream that is a name", []string{"--upstream=dns.google"}, "--upstream"},
		{"an upstream on port 0", []string{"--upstream=127.0.0.1:0"}, "--upstream"},
		{"a CIDR that is not one", []string{"--allow-recursion=10.0.0.0/33"}, "--allow-recursion"},
		{"a negative cache size", []string{"--cache-size=-1"}, "--cache-size"},
		{"a negative negative TTL", []string{"--cache-max-negative-ttl=-1s"}, "--cache-max-negative-ttl"},
		{"a zero forward timeout", []string{"--forward-timeout=0s"}, "--forward-timeout"},
		{"a deadline shorter than the timeout", []string{"--forward-timeout=3s", "--forward-deadline=1s"}, "--forward-deadline"},
		{"a stub domain without servers", []string{"--stub-domain=example.corp"}, "--stub-domain"},
		{"a stub domain with a bad server", []string{"--stub-domain=example.corp=ns1.example.corp"}, "--stub-domain"},
		{"a stub for the root", []string{"--stub-domain=.=127.0.0.1"}, "--stub-domain"},
		{"a cache size that is not a number", []string{"--cache-size=lots"}, "--cache-size"},
		{"an except domain that is no domain", []string{"--forward-except=a..b"}, "--forward-except"},
		{"the root excepted", []string{"--forward-except=."}, "--forward-except"},
	}
	for _, tt := range bad {
		t.Run(tt.name+" is an error naming "+tt.flag, func(t *testing.T) {
			_, err := parseFlags(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.flag) {
				t.Fatalf("err %v, want one naming %s", err, tt.flag)
			}
		})
	}

	t.Run("a listen address that is not ip:port is an error naming it", func(t *testing.T) {
		for _, listen := range []string{"localhost:53", "127.0.0.1", "127.0.0.1:http"} {
			cfg := testConfig("127.0.0.1:53")
			cfg.ListenAddrs = []string{listen}
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), listen) {
				t.Errorf("listen %q: err %v, want one naming it", listen, err)
			}
		}
	})

	t.Run("every bad flag is reported at once", func(t *testing.T) {
		_, err := parseFlags(t, "--upstream=x", "--cache-size=-1", "--allow-recursion=y")
		for _, flag := range []string{"--upstream", "--cache-size", "--allow-recursion"} {
			if err == nil || !strings.Contains(err.Error(), flag) {
				t.Errorf("err %v, want one naming %s", err, flag)
			}
		}
	})

	t.Run("New rejects what Validate rejects", func(t *testing.T) {
		cfg := testConfig("127.0.0.1:0")
		if _, err := New(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "--upstream") {
			t.Fatalf("err %v, want one naming --upstream", err)
		}
	})
}

func TestDefaultUpstreams(t *testing.T) {
	write := func(t *testing.T, text string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "resolv.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	build := func(t *testing.T, path string, listen ...string) (*Forwarder, error) {
		t.Helper()
		cfg := testConfig()
		cfg.ResolvConf, cfg.ListenAddrs = path, listen
		return New(cfg, nil, nil)
	}
	const conf = "search svc.cluster.local\nnameserver 127.0.0.1\nnameserver 127.0.0.53\nnameserver 192.0.2.53\noptions ndots:5\n"

	t.Run("without --upstream the nameservers of resolv.conf are used", func(t *testing.T) {
		f, err := build(t, write(t, conf), "127.0.0.1:1053")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"127.0.0.1:53", "127.0.0.53:53", "192.0.2.53:53"}; !slices.Equal(f.settings.Load().upstream.addrs, want) {
			t.Errorf("upstreams %v, want %v", f.settings.Load().upstream.addrs, want)
		}
	})

	t.Run("the listen address itself is left out", func(t *testing.T) {
		f, err := build(t, write(t, conf), "127.0.0.1:53")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"127.0.0.53:53", "192.0.2.53:53"}; !slices.Equal(f.settings.Load().upstream.addrs, want) {
			t.Errorf("upstreams %v, want %v", f.settings.Load().upstream.addrs, want)
		}
	})

	t.Run("listening on every address leaves out loopback on that port", func(t *testing.T) {
		f, err := build(t, write(t, conf), ":53")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"192.0.2.53:53"}; !slices.Equal(f.settings.Load().upstream.addrs, want) {
			t.Errorf("upstreams %v, want %v", f.settings.Load().upstream.addrs, want)
		}
	})

	t.Run("a resolv.conf naming only this server is an error", func(t *testing.T) {
		_, err := build(t, write(t, "nameserver 127.0.0.1\n"), "0.0.0.0:53")
		if err == nil || !strings.Contains(err.Error(), "no nameserver other than this server") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("a missing resolv.conf is an error naming it and --upstream", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing")
		_, err := build(t, path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--upstream") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestWithoutSelf(t *testing.T) {
	servers := []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:53"), netip.MustParseAddrPort("10.0.0.5:53"),
		netip.MustParseAddrPort("10.0.0.9:53"), netip.MustParseAddrPort("[::1]:53"), netip.MustParseAddrPort("10.0.0.5:5353"),
	}
	local := []netip.Addr{netip.MustParseAddr("10.0.0.5")}
	tests := []struct {
		listen string
		want   []string
	}{
		{"[::]:53", []string{"10.0.0.9:53", "10.0.0.5:5353"}},
		{"10.0.0.5:53", []string{"127.0.0.1:53", "10.0.0.9:53", "[::1]:53", "10.0.0.5:5353"}},
		{"127.0.0.1:1053", []string{"127.0.0.1:53", "10.0.0.5:53", "10.0.0.9:53", "[::1]:53", "10.0.0.5:5353"}},
	}
	for _, tt := range tests {
		listen, err := parseListen(tt.listen)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range withoutSelf(servers, []netip.AddrPort{listen}, local) {
			got = append(got, s.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("listening on %s: %v, want %v", tt.listen, got, tt.want)
		}
	}
}

func TestMetricsRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := testConfig("127.0.0.1:53")
	if _, err := New(cfg, reg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, reg, nil); err == nil {
		t.Error("a second Forwarder on the same registry registered its metrics twice")
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range families {
		names = append(names, mf.GetName())
	}
	for _, want := range []string{"skydns_forward_cache_hits_total", "skydns_forward_cache_misses_total", "skydns_forward_cache_evictions_total", "skydns_forward_cache_entries"} {
		if !slices.Contains(names, want) {
			t.Errorf("metric %s not registered; have %v", want, names)
		}
	}
}

func TestHealthOrder(t *testing.T) {
	clock := newFakeClock()
	h := newHealth(clock.Now)
	addrs := []string{"a", "b", "c"}
	if got := h.order(addrs, 1); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("turn 1: %v", got)
	}
	h.failed("b")
	clock.Advance(time.Second)
	h.failed("a")
	if got := h.order(addrs, 0); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("with a and b failed: %v, want c first, then b (failed first, back first)", got)
	}
	clock.Advance(failureHold - time.Second)
	if got := h.order(addrs, 0); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("after b's hold: %v, want b back among the healthy", got)
	}
	if !h.ok("a") || h.ok("a") {
		t.Error("ok should report a recovery once")
	}
}
