package skydns

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// parse runs args (and the environment) through a fresh flag set.
func parse(args ...string) (Config, error) {
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("skydns", pflag.ContinueOnError)
	fs.Usage = func() {}
	cfg.AddFlags(fs)
	err := cfg.Parse(fs, args)
	return cfg, err
}

func TestDefaultConfigIsValid(t *testing.T) {
	cfg, err := parse()
	if err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	if cfg.DNSAddr != "127.0.0.1:1053" || !cfg.Embedded() || cfg.Zones[0] != "cluster.local." {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
}

func TestBadFlagValuesNameTheFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"a DNS address without a port", []string{"--dns-addr", "127.0.0.1"}, "--dns-addr"},
		{"a DNS address with a host name", []string{"--dns-addr", "localhost:53"}, "--dns-addr"},
		{"a DNS port out of range", []string{"--dns-addr", "127.0.0.1:70000"}, "--dns-addr"},
		{"an HTTP address with a bad port", []string{"--http-addr", "127.0.0.1:http"}, "--http-addr"},
		{"a zone with an empty label", []string{"--zone", "cluster..local"}, "--zone"},
		{"the root zone", []string{"--zone", "."}, "--zone"},
		{"a zone with a too long label", []string{"--zone", strings.Repeat("a", 64) + ".local"}, "--zone"},
		{"a prefix without a leading slash", []string{"--prefix", "skydns"}, "--prefix"},
		{"the bare slash prefix", []string{"--prefix", "/"}, "--prefix"},
		{"a negative TTL", []string{"--ttl", "-1"}, "--ttl"},
		{"a TTL beyond 2^31-1", []string{"--ttl", "4000000000"}, "--ttl"},
		{"a negative largest TTL", []string{"--max-ttl", "-1"}, "--max-ttl"},
		{"a zero largest TTL", []string{"--max-ttl", "0"}, "--max-ttl"},
		{"a largest TTL that is not a number", []string{"--max-ttl", "1h"}, "--max-ttl"},
		{"a largest TTL beyond 2^31-1", []string{"--max-ttl", "4000000000"}, "--max-ttl"},
		{"an unknown log level", []string{"--log-level", "verbose"}, "--log-level"},
		{"a rewrite rule that is not a name rule", []string{"--rewrite", "type A AAAA"}, "--rewrite"},
		{"a rewrite regex that does not compile", []string{"--rewrite", "name regex ( x"}, "--rewrite"},
		{"a template that is not JSON", []string{"--template", "IN A example.org"}, "--template"},
		{"an etcd endpoint without a scheme", []string{"--etcd-endpoints", "127.0.0.1:2379"}, "--etcd-endpoints"},
		{"a missing CA file", []string{"--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-cafile", missing}, "--etcd-cafile"},
		{"an embedded etcd address without a port", []string{"--embedded-etcd-addr", "127.0.0.1"}, "--embedded-etcd-addr"},
		{"an empty data dir for the embedded etcd", []string{"--etcd-data-dir", ""}, "--etcd-data-dir"},
		{"no fast-path answers kept", []string{"--fast-path-answers", "0"}, "--fast-path-answers"},
		{"a GC target below -1", []string{"--gc-percent", "-2"}, "--gc-percent"},
		{"a GC target that is not a number", []string{"--gc-percent", "low"}, "--gc-percent"},
		{"a memory limit below the live heap", []string{"--memory-limit-factor", "0.5"}, "--memory-limit-factor"},
		{"a memory limit factor that is not a number", []string{"--memory-limit-factor", "NaN"}, "--memory-limit-factor"},
		{"a zero shutdown timeout", []string{"--shutdown-timeout", "0s"}, "--shutdown-timeout"},
		{"a negative lameduck", []string{"--lameduck", "-1s"}, "--lameduck"},
		{"a negative staleness bound", []string{"--max-stale", "-5s"}, "--max-stale"},
		{"a malformed duration", []string{"--etcd-probe-interval", "soon"}, "etcd-probe-interval"},
		{"a negative stall timeout", []string{"--etcd-stall-after", "-1s"}, "--etcd-stall-after"},
		{"a negative re-list jitter", []string{"--etcd-relist-jitter", "-2s"}, "--etcd-relist-jitter"},
		{"an unknown flag", []string{"--dns-port", "53"}, "--dns-port"},
		{"a name server address that is not an IP", []string{"--ns-addrs", "10.96.0.10,dns.example"}, "--ns-addrs"},
		{"an upstream that is not an address", []string{"--upstream", "dns.google"}, "--upstream"},
		{"a recursion ACL that is not a prefix", []string{"--allow-recursion", "10.0.0.0/33"}, "--allow-recursion"},
		{"no TCP connections at all", []string{"--tcp-max-connections", "0"}, "--tcp-max-connections"},
		{"a TCP connection limit below -1", []string{"--tcp-max-connections", "-5"}, "--tcp-max-connections"},
		{"a zero TCP idle timeout", []string{"--tcp-idle-timeout", "0s"}, "--tcp-idle-timeout"},
		{"a TCP idle timeout without a unit", []string{"--tcp-idle-timeout", "8"}, "--tcp-idle-timeout"},
		{"zero queries per TCP connection", []string{"--tcp-max-queries", "0"}, "--tcp-max-queries"},
		{"a TCP query limit that is not a number", []string{"--tcp-max-queries", "lots"}, "--tcp-max-queries"},
		{"a transfer network that is not a CIDR", []string{"--transfer-to", "10.0.0.0/8,secondary.example"}, "--transfer-to"},
		{"a transfer network with a bad mask", []string{"--transfer-to", "10.0.0.0/33"}, "--transfer-to"},
		{"a NOTIFY target that is a host name", []string{"--transfer-to", "10.0.0.0/8", "--notify", "ns1.example:53"}, "--notify"},
		{"a NOTIFY target with port 0", []string{"--transfer-to", "10.0.0.0/8", "--notify", "10.0.0.7:0"}, "--notify"},
		{"NOTIFY without anyone allowed to transfer", []string{"--notify", "10.0.0.7"}, "--notify"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is rejected naming "+tc.flag, func(t *testing.T) {
			_, err := parse(tc.args...)
			if err == nil {
				t.Fatalf("%v accepted", tc.args)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.flag) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q should name %s on one line", msg, tc.flag)
			}
		})
	}
}

func TestTheWatchTimingComesFromTheFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want WatchTiming
	}{
		{nil, WatchTiming{RequestTimeout: 5 * time.Second, ProbeInterval: 2 * time.Second, RelistJitter: 2 * time.Second}},
		{[]string{"--etcd-stall-after", "30s", "--etcd-relist-jitter", "0", "--etcd-probe-interval", "1s"},
			WatchTiming{RequestTimeout: 5 * time.Second, ProbeInterval: time.Second, StallAfter: 30 * time.Second, RelistJitter: -1}},
	} {
		cfg, err := parse(tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.watchTiming(); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestTransferFlagsAreReadFromFlagsAndTheEnvironment(t *testing.T) {
	t.Setenv("SKYDNS_NOTIFY", "10.0.0.7,10.0.0.8:5353")
	cfg, err := parse("--transfer-to", "10.0.0.0/8,192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.TransferTo, " ") != "10.0.0.0/8 192.0.2.7" || strings.Join(cfg.Notify, " ") != "10.0.0.7 10.0.0.8:5353" {
		t.Fatalf("transfer-to %v, notify %v", cfg.TransferTo, cfg.Notify)
	}
}

func TestSeveralBadValuesAreReportedOnOneLine(t *testing.T) {
	_, err := parse("--zone", "a..b", "--log-level", "loud", "--etcd-endpoints", "x")
	msg := err.Error()
	for _, flag := range []string{"--zone", "--log-level", "--etcd-endpoints"} {
		if !strings.Contains(msg, flag) {
			t.Errorf("error %q does not name %s", msg, flag)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q spans several lines", msg)
	}
}

func TestZonesAreNormalized(t *testing.T) {
	cfg, err := parse("--zone", "Cluster.Local", "--zone", "example.org.")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Zones, " "); got != "cluster.local. example.org." {
		t.Fatalf("zones %q, want fully qualified lower case", got)
	}
}

func TestFlagsFallBackToTheEnvironment(t *testing.T) {
	t.Setenv("SKYDNS_DNS_ADDR", "127.0.0.1:5353")
	t.Setenv("SKYDNS_ZONE", "a.test,b.test")
	t.Setenv("ETCD_ENDPOINTS", "http://127.0.0.1:2379")
	t.Setenv("SKYDNS_TTL", "60")
	t.Run("unset flags take the environment's values", func(t *testing.T) {
		cfg, err := parse()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DNSAddr != "127.0.0.1:5353" || len(cfg.Zones) != 2 || cfg.TTL != 60 || cfg.Embedded() {
			t.Fatalf("environment ignored: %+v", cfg)
		}
	})
	t.Run("a flag on the command line wins over the environment", func(t *testing.T) {
		cfg, err := parse("--dns-addr", "127.0.0.1:53")
		if err != nil || cfg.DNSAddr != "127.0.0.1:53" {
			t.Fatalf("got %q, %v; want the flag's value", cfg.DNSAddr, err)
		}
	})
	t.Run("a bad environment value names the flag and the variable", func(t *testing.T) {
		t.Setenv("SKYDNS_TTL", "soon")
		_, err := parse()
		if err == nil || !strings.Contains(err.Error(), "--ttl") || !strings.Contains(err.Error(), "SKYDNS_TTL") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a value that parses but is invalid names the flag", func(t *testing.T) {
		t.Setenv("SKYDNS_LOG_LEVEL", "loud")
		_, err := parse()
		if err == nil || !strings.Contains(err.Error(), "--log-level") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestTCPLimitsDefaultToUnlimitedQueriesAndReadTheEnvironment(t *testing.T) {
	cfg, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if want := (TCPLimits{MaxConnections: 1000, IdleTimeout: 8 * time.Second, MaxQueries: -1}); cfg.TCP != want {
		t.Fatalf("TCP limits %+v, want %+v", cfg.TCP, want)
	}
	t.Setenv("SKYDNS_TCP_MAX_CONNECTIONS", "-1")
	t.Setenv("SKYDNS_TCP_IDLE_TIMEOUT", "30s")
	t.Setenv("SKYDNS_TCP_MAX_QUERIES", "500")
	cfg, err = parse()
	if err != nil {
		t.Fatal(err)
	}
	if want := (TCPLimits{MaxConnections: -1, IdleTimeout: 30 * time.Second, MaxQueries: 500}); cfg.TCP != want {
		t.Fatalf("TCP limits from the environment %+v, want %+v", cfg.TCP, want)
	}
}

func TestEffectiveConfigLogHidesThePassword(t *testing.T) {
	cfg, err := parse("--etcd-endpoints", "http://127.0.0.1:2379", "--etcd-username", "root", "--etcd-password", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("start", "config", cfg)
	if out := buf.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "etcd-password-set=true") {
		t.Fatalf("config log %q", out)
	}
}

func TestTheClustersetEtcdFlagsNameTheirFaults(t *testing.T) {
	for _, c := range etcdtest.OptionalEtcdFlagCases("clusterset-", "--clusterset-prefix", "/clusterset") {
		t.Run(c.Name, func(t *testing.T) {
			args := c.Args
			if slices.Contains(args, "--clusterset-prefix=/clusterset") {
				args = append(slices.Clone(args), "--cluster-id=east")
			}
			cfg, err := parse(append(args, "--etcd-endpoints=http://127.0.0.1:2379")...)
			if c.Want == "" {
				if err != nil || len(cfg.ClustersetEtcd.Endpoints) != 1 || cfg.Embedded() {
					t.Fatalf("parse(%q) = %v, clusterset etcd %v", args, err, cfg.ClustersetEtcd.Endpoints)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.Want) {
				t.Fatalf("parse(%q) = %v, want an error saying %q", args, err, c.Want)
			}
		})
	}
}
