package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/contract"
)

func TestFlagsDefaultToTheFullComparison(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.services != 10000 || c.rounds != 3 || c.duration != 10*time.Second || len(c.servers) != 9 || len(c.parts) != 4 {
		t.Fatalf("defaults %+v", c)
	}
	if len(c.memSizes) != 3 || c.memSizes[2] != 50000 {
		t.Fatalf("memory sizes %v", c.memSizes)
	}
}

func TestBadFlagsAreRejectedWithAReason(t *testing.T) {
	cases := map[string][]string{
		"an unknown part":         {"--parts", "dns,speed"},
		"an unknown server":       {"--servers", "bind9"},
		"no services":             {"--services", "0"},
		"a run under a second":    {"--duration", "500ms"},
		"load on the server CPU":  {"--server-cpu", "1", "--load-cpu", "1"},
		"a negative memory size":  {"--memory-sizes", "0,-5"},
		"no callgrind queries":    {"--callgrind-queries", "0"},
		"a flag that isn't there": {"--fast"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stderr strings.Builder
			if _, err := parseFlags(args, &stderr); err == nil || stderr.Len() == 0 {
				t.Fatalf("err %v, stderr %q", err, stderr.String())
			}
		})
	}
}

func TestCorefileServesTheZoneFromEtcd(t *testing.T) {
	got := corefileText(1053, "http://127.0.0.1:2379", cache30)
	want := "cluster.local:1053 {\n    bind 127.0.0.1\n    etcd cluster.local {\n        path /skydns\n        endpoint http://127.0.0.1:2379\n    }\n    cache 30\n}\n"
	if got != want {
		t.Fatalf("Corefile:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(corefileText(1053, "http://127.0.0.1:2379", ""), "cache") {
		t.Fatal("a Corefile without cache has one")
	}
	if all := corefileText(1053, "http://127.0.0.1:2379", cacheAll); !strings.Contains(all, "success 200000") || !strings.Contains(all, "denial 200000") {
		t.Fatalf("the cache holding every answer:\n%s", all)
	}
}

func TestFindMetricReadsAnUnlabelledSample(t *testing.T) {
	text := "# HELP skydns_snapshot_revision x\nskydns_snapshot_revision_total 9\nskydns_snapshot_revision 158\n"
	if v, err := findMetric(strings.NewReader(text), "skydns_snapshot_revision"); err != nil || v != 158 {
		t.Fatalf("findMetric = %v, %v", v, err)
	}
	if _, err := findMetric(strings.NewReader(text), "go_memstats_heap_inuse_bytes"); err == nil {
		t.Fatal("a missing metric: want an error")
	}
}

func TestWindowSubtractsTheIdleCount(t *testing.T) {
	if got := (window{busy: 3_100_000, idle: 100_000, completed: 100}).perQuery(); got != 30000 {
		t.Fatalf("perQuery = %v", got)
	}
	if got := (window{busy: 5}).perQuery(); got != 0 {
		t.Fatalf("no queries: %v", got)
	}
}

func TestBurstRecordsAreNewAndValid(t *testing.T) {
	kvs := burstRecords("burst1", 300)
	seen := map[string]bool{}
	for _, kv := range kvs {
		if _, err := contract.Decode(kv.Key, []byte(kv.Value)); err != nil {
			t.Fatal(err)
		}
		seen[kv.Key] = true
	}
	if len(seen) != 300 || kvs[299].Key != "/skydns/local/cluster/svc/burst1/b299/x" || kvs[299].Value != `{"host":"10.200.1.44"}` {
		t.Fatalf("%d keys, last %+v", len(seen), kvs[299])
	}
}

func TestPerQueryDividesCPUTime(t *testing.T) {
	if perQuery(time.Second, 100000) != 10*time.Microsecond || perQuery(time.Second, 0) != 0 {
		t.Fatal("perQuery")
	}
}

func TestDnsmasqRunsWithoutForkingUnderCallgrind(t *testing.T) {
	argv, _ := dnsmasqArgv(&bench{hosts: "/tmp/hosts"}, 1053, 0)
	if !slices.Contains(argv, "--keep-in-foreground") || slices.Contains(argv, "--no-daemon") {
		t.Fatalf("timed runs: %q; want it kept in the foreground, forking per TCP connection", argv)
	}
	cg := dnsmasqCallgrindArgv(argv)
	if cg[0] != "dnsmasq" || !slices.Contains(cg, "--no-daemon") || slices.Contains(cg, "--keep-in-foreground") ||
		slices.Contains(cg, "--user=root") || len(cg) != len(argv)-2 {
		t.Fatalf("under callgrind: %q; want --no-daemon instead of the foreground flags", cg)
	}
}
