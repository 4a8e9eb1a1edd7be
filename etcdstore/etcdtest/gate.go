package etcdtest

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Gate is an etcd client whose watches can be cut off, as a reader's node
// cut off from etcd: Hold ends every open watch and makes new ones wait,
// without events, until Release. Gets pass through.
type Gate struct {
	*clientv3.Client
	mu      sync.Mutex
	held    chan struct{} // closed by Release; nil while not held
	cancels []context.CancelFunc
}

// Watch is the client's Watch, or a wait while the gate is held.
func (g *Gate) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	g.mu.Lock()
	if held := g.held; held != nil {
		g.mu.Unlock()
		ch := make(chan clientv3.WatchResponse)
		go func() {
			select {
			case <-held:
			case <-ctx.Done():
			}
			close(ch)
		}()
		return ch
	}
	ctx, cancel := context.WithCancel(ctx)
	g.cancels = append(g.cancels, cancel)
	g.mu.Unlock()
	return g.Client.Watch(ctx, key, opts...)
}

// Hold ends the open watches and holds new ones.
func (g *Gate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = make(chan struct{})
	for _, cancel := range g.cancels {
		cancel()
	}
	g.cancels = nil
}

// Release ends the held watches; the next ones reach etcd.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}
