package kube2sky

import (
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/spf13/pflag"
)

func TestTheDefaultConfigIsValid(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.owner() != "kube2sky.cluster.local" {
		t.Errorf("default owner %q", c.owner())
	}
	if c.electionPrefix() != "/skydns/_kube2sky/leader/kube2sky.cluster.local" {
		t.Errorf("election prefix %q", c.electionPrefix())
	}
}

func TestABadValueNamesItsFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		mod  func(*Config)
		flag string
	}{
		{"no etcd endpoints", func(c *Config) { c.Etcd.Endpoints = nil }, "--etcd-endpoints"},
		{"a bad etcd endpoint", func(c *Config) { c.Etcd.Endpoints = []string{"127.0.0.1:2379"} }, "--etcd-endpoints"},
		{"an invalid zone", func(c *Config) { c.Zone = "Cluster_Local" }, "--zone"},
		{"a prefix without a slash", func(c *Config) { c.Prefix = "skydns" }, "--prefix"},
		{"a prefix with a trailing slash", func(c *Config) { c.Prefix = "/skydns/" }, "--prefix"},
		{"an HTTP address without a port", func(c *Config) { c.HTTPAddr = "localhost" }, "--http-addr"},
		{"no workers", func(c *Config) { c.Workers = 0 }, "--workers"},
		{"a zero resync period", func(c *Config) { c.ResyncPeriod = 0 }, "--resync-period"},
		{"a lease shorter than 2s", func(c *Config) { c.LeaseDuration = time.Second }, "--leader-elect-lease-duration"},
		{"a lease of a fraction of a second", func(c *Config) { c.LeaseDuration = 2500 * time.Millisecond }, "--leader-elect-lease-duration"},
		{"an owner with a slash", func(c *Config) { c.OwnerID = "a/b" }, "--owner-id"},
		{"one op per Txn", func(c *Config) { c.MaxTxnOps = 1 }, "--max-txn-ops"},
		{"an unknown log level", func(c *Config) { c.LogLevel = "loud" }, "--log-level"},
		{"a GC target below -1", func(c *Config) { c.GCPercent = -2 }, "--gc-percent"},
		{"a namespace that is no DNS label", func(c *Config) { c.Namespaces = []string{"default", "Kube_System"} }, "--namespaces"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.mod(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.flag) {
				t.Errorf("Validate() = %v, want an error naming %s", err, c.flag)
			}
		})
	}
}

func TestEveryFlagCanComeFromTheEnvironment(t *testing.T) {
	t.Setenv("KUBE2SKY_ZONE", "example.org")
	t.Setenv("KUBE2SKY_WORKERS", "7")
	t.Setenv("KUBE2SKY_LEADER_ELECT", "false")
	t.Setenv("ETCD_ENDPOINTS", "http://127.0.0.1:1,http://127.0.0.1:2")
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	if err := fs.Parse([]string{"--workers=3"}); err != nil {
		t.Fatal(err)
	}
	if err := flagenv.Apply(fs, "KUBE2SKY"); err != nil {
		t.Fatal(err)
	}
	if cfg.Zone != "example.org" || cfg.Workers != 3 || cfg.LeaderElect || len(cfg.Etcd.Endpoints) != 2 {
		t.Errorf("config from env = zone %q workers %d leader-elect %v endpoints %v", cfg.Zone, cfg.Workers, cfg.LeaderElect, cfg.Etcd.Endpoints)
	}
	if cfg.owner() != "kube2sky.example.org" {
		t.Errorf("owner derived from the zone = %q", cfg.owner())
	}
}

func TestAClustersetPrefixOverlappingTheRecordsIsRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clusterset.Prefix = "/skydns/clusterset"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--clusterset-prefix") {
		t.Errorf("Validate() = %v, want an error naming --clusterset-prefix", err)
	}
	cfg.Clusterset.Prefix, cfg.Clusterset.ClusterID = "/clusterset", "east"
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}

func TestTheClustersetEtcdFlagsNameTheirFaults(t *testing.T) {
	for _, c := range etcdtest.OptionalEtcdFlagCases("clusterset-", "--clusterset-prefix", "/clusterset") {
		t.Run(c.Name, func(t *testing.T) {
			cfg := DefaultConfig()
			fs := pflag.NewFlagSet("kube2sky", pflag.ContinueOnError)
			cfg.AddFlags(fs)
			err := cfg.Parse(fs, c.Args)
			if c.Want == "" {
				if err != nil || len(cfg.ClustersetEtcd.Endpoints) != 1 || cfg.Etcd.Endpoints[0] != "http://127.0.0.1:2379" {
					t.Fatalf("Parse(%q) = %v, clusterset etcd %v, records' etcd %v", c.Args, err, cfg.ClustersetEtcd.Endpoints, cfg.Etcd.Endpoints)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.Want) {
				t.Fatalf("Parse(%q) = %v, want an error saying %q", c.Args, err, c.Want)
			}
		})
	}
}

func TestThePublisherTakesTheRequestTimeoutOfItsEtcd(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Etcd.RequestTimeout, cfg.ClustersetEtcd.RequestTimeout = 3*time.Second, 7*time.Second
	if got := cfg.clustersetConfig().RequestTimeout; got != 3*time.Second {
		t.Errorf("without --clusterset-etcd-endpoints: %s, want --etcd-request-timeout's 3s", got)
	}
	cfg.ClustersetEtcd.Endpoints = []string{"http://127.0.0.1:2379"}
	if got := cfg.clustersetConfig().RequestTimeout; got != 7*time.Second {
		t.Errorf("with --clusterset-etcd-endpoints: %s, want --clusterset-etcd-request-timeout's 7s", got)
	}
}
