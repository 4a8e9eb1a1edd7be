package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// TestRandomUpdatesHoldWhatAMapHolds applies random batches of puts and
// deletes (keys sharing long prefixes, hosts that are addresses or names
// sharing long suffixes, some batches of thousands of keys so that leaves
// and groups of leaves split, others emptying whole runs) and after each
// batch compares every record, the record count and single-key lookups
// with a plain map; every earlier snapshot must still hold what it held.
func TestRandomUpdatesHoldWhatAMapHolds(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	names := map[string]string{} // key → its name
	key := func() string {
		ns, web, ep := rng.IntN(3), rng.IntN(400), rng.IntN(12)
		k := fmt.Sprintf("%s/local/cluster/svc/ns%d/web-%d/ep%d", prefix, ns, web, ep)
		names[k] = fmt.Sprintf("ep%d.web-%d.ns%d.svc.cluster.local.", ep, web, ns)
		return k
	}
	model := map[string]string{}
	snap := snapshot.Empty(prefix)
	type kept struct {
		snap *snapshot.Snapshot
		want string
	}
	var history []kept
	for batch := range 60 {
		size := 1 + rng.IntN(20)
		if batch%10 == 3 {
			size = 4000 // many keys at once: leaves and their groups split
		}
		var events []contract.Event
		for range size {
			k := key()
			if rng.IntN(3) == 0 {
				events = append(events, del(k))
				delete(model, k)
				continue
			}
			v := fmt.Sprintf(`{"host":"10.%d.%d.%d"}`, batch, rng.IntN(256), rng.IntN(256))
			if rng.IntN(2) == 0 { // a name: leaves store what their names share once
				v = fmt.Sprintf(`{"host":"h%d.web-%d.svc.cluster.local."}`, rng.IntN(1000), rng.IntN(3))
			}
			events = append(events, put(k, v))
			model[k] = v
		}
		next, errs := snap.Apply(contract.Update{Revision: int64(batch + 2), Full: batch == 0, Events: events})
		checkErrors(t, errs, nil)
		snap = next
		want := modelKeys(model)
		if got := all(snap); got != want || snap.Len() != len(model) {
			t.Fatalf("batch %d: %d records\n%s\nwant %d\n%s", batch, snap.Len(), got, len(model), want)
		}
		for k := range model {
			name := names[k]
			if es := snap.Exact(name); len(es) != 1 || es[0].Key() != k || fmt.Sprintf(`{"host":"%s"}`, es[0].Record.Host) != model[k] {
				t.Fatalf("batch %d: Exact(%s) = %+v, want %s %s", batch, name, es, k, model[k])
			}
		}
		history = append(history, kept{snap, want})
	}
	for i, h := range history {
		if got := all(h.snap); got != h.want {
			t.Fatalf("snapshot %d changed after later updates", i)
		}
	}
}

func modelKeys(model map[string]string) string {
	var ks []string
	for k := range model {
		ks = append(ks, k)
	}
	// Tree order: each key with a "/" appended (see the package doc).
	slices.SortFunc(ks, func(a, b string) int { return strings.Compare(a+"/", b+"/") })
	return strings.Join(ks, " ")
}
