package fastpath

import (
	"sync"
	"testing"
)

// sharingCaches returns n Caches sharing one Store, as a Server's sockets do.
func sharingCaches(src Source, n int) []*Cache {
	store := NewStore(src, 100)
	caches := make([]*Cache, n)
	for i := range caches {
		caches[i] = NewCache(CacheConfig{Source: src, MaxUDPSize: fakeMaxUDPSize, Store: store, Stats: NewStats().NewShard(true)})
	}
	return caches
}

func TestCachesSharingAStoreComputeEachAnswerOnce(t *testing.T) {
	src := &fakeAnswers{ttl: 30}
	caches := sharingCaches(src, 3)
	for _, c := range caches {
		if _, ok := reply(c, aQuery("n.2.test.", 0)); !ok {
			t.Fatal("not answered")
		}
	}
	if src.computed != 1 {
		t.Errorf("the source computed %d answers for three sockets, want 1", src.computed)
	}
	if n := caches[2].Len(); n != 1 {
		t.Errorf("the store holds %d answers, want 1", n)
	}
}

func TestANewVersionSeenByOneCacheRefreshesTheSharedStore(t *testing.T) {
	src := &fakeAnswers{ttl: 30}
	caches := sharingCaches(src, 2)
	reply(caches[0], aQuery("n.2.test.", 0))
	src.bump(60)
	caches[0].Refresh()
	caches[1].Refresh() // sees the version already applied
	got, ok := reply(caches[1], aQuery("n.2.test.", 0))
	if !ok {
		t.Fatal("not answered")
	}
	if ttl := unpack(t, got).Answer[0].Header().Ttl; ttl != 60 {
		t.Fatalf("TTL %d: the answer of the old version was served", ttl)
	}
	if src.computed != 2 {
		t.Errorf("the source computed %d answers, want 2 (one per version)", src.computed)
	}
}

func TestCachesSharingAStoreAreSafeConcurrently(t *testing.T) {
	src := &fakeAnswers{ttl: 30}
	caches := sharingCaches(src, 4)
	var wg sync.WaitGroup
	for i, c := range caches {
		wg.Go(func() {
			for j := range 200 {
				if j%50 == 0 && i == 0 {
					src.bump(30)
				}
				c.Refresh()
				if _, ok := reply(c, aQuery("n."+string(rune('1'+j%9))+".test.", 0)); !ok {
					t.Error("not answered")
					return
				}
			}
		})
	}
	wg.Wait()
}
