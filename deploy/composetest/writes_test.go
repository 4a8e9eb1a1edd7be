package composetest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// electionPrefix holds kube2sky's leader election keys, which change with
// every leader and are not records.
const electionPrefix = "/skydns/_kube2sky/"

// writeLog is what a writeWatcher saw under /skydns/.
type writeLog struct {
	puts     map[string]int
	rewrites []string // keys put again with the value they had
	deletes  []string
}

// putsUnder counts the puts of keys under prefix.
func (w writeLog) putsUnder(prefix string) int {
	n := 0
	for key, count := range w.puts {
		if strings.HasPrefix(key, prefix) {
			n += count
		}
	}
	return n
}

// writeWatcher records every change of the records from the moment it
// starts, through etcd's watch (which resumes across a member's loss), as
// skydns's read-only etcd user.
type writeWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	log    writeLog
}

func watchWrites(t *testing.T, creds etcdCreds) *writeWatcher {
	t.Helper()
	client, err := creds.options("skydns").New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	w := &writeWatcher{done: make(chan struct{}), log: writeLog{puts: map[string]int{}}}
	watchCtx, stop := context.WithCancel(context.Background())
	w.cancel = stop
	ch := client.Watch(clientv3.WithRequireLeader(watchCtx), "/skydns/",
		clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(resp.Header.Revision+1))
	go w.run(ch)
	t.Cleanup(func() { w.stop() })
	return w
}

func (w *writeWatcher) run(ch clientv3.WatchChan) {
	defer close(w.done)
	for resp := range ch {
		if err := resp.Err(); err != nil && !resp.Canceled {
			continue // the client retries with the next member
		}
		w.mu.Lock()
		for _, ev := range resp.Events {
			w.record(ev)
		}
		w.mu.Unlock()
	}
}

func (w *writeWatcher) record(ev *clientv3.Event) {
	key := string(ev.Kv.Key)
	if strings.HasPrefix(key, electionPrefix) {
		return
	}
	if ev.Type == clientv3.EventTypeDelete {
		w.log.deletes = append(w.log.deletes, key)
		return
	}
	w.log.puts[key]++
	if ev.PrevKv != nil && bytes.Equal(ev.PrevKv.Value, ev.Kv.Value) {
		w.log.rewrites = append(w.log.rewrites, key)
	}
}

// stop ends the watch and returns what it saw.
func (w *writeWatcher) stop() writeLog {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log
}
