package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseCountsRejectsWhatIsNotAPositiveCount(t *testing.T) {
	got, err := parseCounts("100, 1000,5000")
	if err != nil || len(got) != 3 || got[1] != 1000 {
		t.Fatalf("parseCounts: %v, %v", got, err)
	}
	for _, bad := range []string{"", "100,", "0", "-5", "1e3", "ten"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q) accepted", bad)
		}
	}
}

func TestOptionsSayWhichFlagIsWrong(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--readers 0", "--readers"},
		{"--proxies -1", "--proxies"},
		{"--readers-per-client 0", "--readers-per-client"},
		{"--rate 0", "--rate"},
		{"--start-rate 0", "--start-rate"},
		{"--services 3", "--services"},
		{"--etcd /nonexistent/etcd", "--etcd"},
		{"--proxies 0 --direct=false", "--direct"},
		{"--list-slots -1", "--list-slots"},
		{"--tiers relay,nginx", "--tiers"},
		{"--watch-batch 0s", "--watch-batch"},
		{"--watch-batch 2s", "--watch-batch"},
	} {
		_, err := parseOptions(strings.Fields(c.args))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %s", c.args, err, c.want)
		}
	}
}

func TestDirectFalseRunsOnlyTheProxiedSetup(t *testing.T) {
	for _, c := range []struct {
		o    options
		want []int
	}{
		{options{direct: true, proxies: 2}, []int{2, 0}},
		{options{direct: true, proxies: 0}, []int{0}},
		{options{direct: false, proxies: 3}, []int{3}},
	} {
		if got := c.o.proxyCounts(); !slices.Equal(got, c.want) {
			t.Errorf("direct %v, proxies %d: runs %v, want %v", c.o.direct, c.o.proxies, got, c.want)
		}
	}
}

func TestEachTierRunsWithTheProxiesAndTheDirectRunOnce(t *testing.T) {
	o := options{direct: true, proxies: 2, perClient: 1, tiers: []string{tierRelay, tierRelayBatched}}
	var got []string
	for _, s := range o.setups(1000) {
		got = append(got, s.proxiesLabel())
	}
	if want := []string{"2 relay", "2 relay-batched", "0"}; !slices.Equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
}

func TestAChangeMovesOneEndpointInKube2skysTxnShape(t *testing.T) {
	d := newDataset(100, 5)
	for i := range d.services {
		d.built[i] = d.build(i)
		for _, e := range d.built[i] {
			d.modRev[e.Key] = 7
		}
	}
	d.fence = fence{key: fenceKey, rev: 3}
	keys := len(d.modRev)
	ch := d.nextChange()
	// A headless endpoint without a hostname has an A record, an SRV record
	// of the named port and a PTR record, all keyed by its address.
	if len(ch.puts) != 3 || len(ch.dels) != 3 {
		t.Fatalf("want 3 puts and 3 deletes, got %v and %v", ch.puts, ch.dels)
	}
	if len(ch.cmps) != 1+6 || len(ch.ops) != 6 {
		t.Fatalf("want the fence and one mod-revision compare per key, got %d compares, %d ops", len(ch.cmps), len(ch.ops))
	}
	d.committed(ch, 8)
	if len(d.modRev) != keys {
		t.Fatalf("the key count moved from %d to %d", keys, len(d.modRev))
	}
	for _, k := range ch.puts {
		if d.modRev[k] != 8 {
			t.Errorf("%s at mod revision %d, want 8", k, d.modRev[k])
		}
	}
}

func TestFanOutIsTheLastApplyOfRevisionsEveryReaderApplied(t *testing.T) {
	tr := newTracker()
	tr.window(10, 3)
	at := time.Unix(100, 0)
	tr.committed(10, at)
	tr.committed(11, at)
	tr.applied(0, 10, at.Add(5*time.Millisecond))
	tr.applied(1, 10, at.Add(9*time.Millisecond))
	tr.applied(0, 11, at.Add(time.Millisecond)) // reader 1 never applies 11
	tr.applied(0, 99, at)                       // outside the window
	lat, missed := tr.fanOut(2)
	if len(lat) != 1 || lat[0] != 9*time.Millisecond || missed != 1 {
		t.Fatalf("got %v, %d missed; want [9ms], 1 missed", lat, missed)
	}
	tr.exclude.Store(1)
	tr.applied(1, 11, at.Add(time.Hour))
	if lat, _ := tr.fanOut(1); percentile(lat, 100) != 9*time.Millisecond {
		t.Fatalf("an excluded reader's apply counted: %v", lat)
	}
}

func TestPercentileOfSortedDurations(t *testing.T) {
	d := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if percentile(d, 50) != 5 || percentile(d, 100) != 10 || percentile(nil, 99) != 0 {
		t.Fatalf("p50 %v, max %v", percentile(d, 50), percentile(d, 100))
	}
}
