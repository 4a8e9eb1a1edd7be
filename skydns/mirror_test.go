package skydns

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// heldSource is a real etcd client whose watch the test can break and
// hold back, to let etcd compact the revisions the watch still needs.
type heldSource struct {
	*clientv3.Client
	mu     sync.Mutex
	hold   chan struct{} // while non-nil, Watch waits for it to close
	cancel context.CancelFunc
}

func (s *heldSource) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	return s.Client.Watch(ctx, key, opts...)
}

// breakAndHold ends the current watch; the next one waits for release.
func (s *heldSource) breakAndHold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = make(chan struct{})
	s.cancel()
}

func (s *heldSource) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.hold)
	s.hold = nil
}

// runMirror runs a Mirror of the default prefix from src until the test
// ends.
func runMirror(t *testing.T, src etcdstore.Source, logger *slog.Logger) *Mirror {
	t.Helper()
	return runCountedMirror(t, src, nil, logger)
}

// runCountedMirror is runMirror counting in metrics.
func runCountedMirror(t *testing.T, src etcdstore.Source, metrics *Metrics, logger *slog.Logger) *Mirror {
	t.Helper()
	m := NewMirror(contract.DefaultPrefix, metrics, logger)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx, src, WatchTiming{RequestTimeout: time.Second, ProbeInterval: 100 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

// hostsOf returns the hosts the snapshot holds for name, sorted.
func hostsOf(m *Mirror, name string) string {
	var hosts []string
	for _, e := range m.Snapshot().Lookup(name) {
		hosts = append(hosts, e.Record.Host)
	}
	return fmt.Sprint(sorted(hosts))
}

func waitHosts(t *testing.T, m *Mirror, name, want string) {
	t.Helper()
	polltest.NoComplaint(t, "mirror of "+name, func() string {
		if got := hostsOf(m, name); got != want {
			return "holding " + got + ", want " + want
		}
		return ""
	})
}

func TestCompactionWhileWatchingRelists(t *testing.T) {
	etcd := etcdtest.Start(t)
	src := &heldSource{Client: etcd.Client}
	logs := &logBuffer{}
	m := runMirror(t, src, slog.New(slog.NewTextHandler(logs, nil)))
	put(t, etcd, web, "a", `{"host":"10.0.0.1"}`)
	put(t, etcd, web, "c", `{"host":"10.0.0.3"}`)
	put(t, etcd, "bad.default.svc.cluster.local.", "x", `not json`)
	waitHosts(t, m, web, "[10.0.0.1 10.0.0.3]")

	src.breakAndHold()
	etcd.Delete(t, contract.Key(contract.DefaultPrefix, web)+"/a")
	put(t, etcd, web, "b", `{"host":"10.0.0.2"}`)
	rev := put(t, etcd, web, "c", `{"host":"10.0.0.4"}`)
	if _, err := etcd.Client.Compact(t.Context(), rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	src.release()

	t.Run("every change made during the gap is served after the re-list", func(t *testing.T) {
		waitHosts(t, m, web, "[10.0.0.2 10.0.0.4]")
		if got := m.Snapshot().Revision(); got < rev {
			t.Fatalf("snapshot at revision %d, want at least %d", got, rev)
		}
	})
	t.Run("the watch was compacted and the prefix listed again", func(t *testing.T) {
		if n := logs.count("watch compacted, listing again"); n != 1 {
			t.Fatalf("logged the compaction %d times, want 1", n)
		}
	})
	t.Run("the malformed value is logged once despite the re-list", func(t *testing.T) {
		if n := logs.count("skipping malformed record"); n != 1 {
			t.Fatalf("logged the malformed value %d times, want 1", n)
		}
	})
	t.Run("changes after the re-list are followed by the new watch", func(t *testing.T) {
		put(t, etcd, web, "d", `{"host":"10.0.0.5"}`)
		waitHosts(t, m, web, "[10.0.0.2 10.0.0.4 10.0.0.5]")
	})
}

func TestMirrorReadiness(t *testing.T) {
	t.Run("a mirror that never reached etcd is not synced and says why", func(t *testing.T) {
		etcd := etcdtest.Start(t)
		url := etcd.ClientURL()
		etcd.Stop()
		client := etcdtest.NewClient(t, url)
		m := runMirror(t, client, slog.New(slog.DiscardHandler))
		polltest.NoComplaint(t, "readiness", func() string {
			err := m.Ready()
			if err == nil || !startsWith(err.Error(), "not synced: etcd unreachable since ") {
				return fmt.Sprintf("%v", err)
			}
			return ""
		})
		if m.Snapshot().Revision() != 0 {
			t.Fatalf("snapshot at revision %d, want the empty one", m.Snapshot().Revision())
		}
	})
	t.Run("a fresh mirror is not synced", func(t *testing.T) {
		m := NewMirror(contract.DefaultPrefix, nil, slog.New(slog.DiscardHandler))
		if err := m.Ready(); err == nil || err.Error() != "not synced" {
			t.Fatalf("Ready() = %v, want \"not synced\"", err)
		}
	})
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func TestMalformedSet(t *testing.T) {
	bad := func(key, v string) contract.Event {
		return contract.Event{Type: contract.Put, Key: key, Value: []byte(v)}
	}
	good := func(key string) contract.Event { return bad(key, `{"host":"10.0.0.1"}`) }
	del := func(key string) contract.Event { return contract.Event{Type: contract.Delete, Key: key} }
	const k1, k2 = "/skydns/local/a/x", "/skydns/local/b/x"
	steps := []struct {
		name      string
		update    contract.Update
		wantFresh int
		wantKeys  int
	}{
		{"a first list reports each bad value", contract.Update{Full: true, Events: []contract.Event{bad(k1, "x"), bad(k2, "{}"), good("/skydns/local/c")}}, 2, 2},
		{"a re-list of the same values reports nothing", contract.Update{Full: true, Events: []contract.Event{bad(k1, "x"), bad(k2, "{}")}}, 0, 2},
		{"a different bad value at a known key is reported", contract.Update{Events: []contract.Event{bad(k1, "y")}}, 1, 2},
		{"a good value clears its key", contract.Update{Events: []contract.Event{good(k1)}}, 0, 1},
		{"a delete clears its key", contract.Update{Events: []contract.Event{del(k2)}}, 0, 0},
		{"the old bad value at a cleared key is new again", contract.Update{Events: []contract.Event{bad(k2, "{}")}}, 1, 1},
		{"a re-list without the key clears it", contract.Update{Full: true, Events: []contract.Event{good(k1)}}, 0, 0},
		{"keys outside the prefix are ignored", contract.Update{Events: []contract.Event{bad("/skydnsx/a", "x")}}, 0, 0},
	}
	var s malformedSet
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			fresh := s.update("/skydns", step.update, true)
			if len(fresh) != step.wantFresh || len(s) != step.wantKeys {
				t.Fatalf("got %d new bad values and %d bad keys, want %d and %d", len(fresh), len(s), step.wantFresh, step.wantKeys)
			}
		})
	}
}
