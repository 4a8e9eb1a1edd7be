package etcdtest

import (
	"context"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// MutingSource is an etcd client whose open watches can be silenced
// without ending, as a watch a grpc-proxy joined to a dead upstream
// watch: Mute silences those open, not those opened after.
type MutingSource struct {
	*clientv3.Client
	mu       sync.Mutex
	muted    chan struct{} // closed by Mute
	progress atomic.Int64  // progress notifications passed on
}

// NewMutingSource wraps c.
func NewMutingSource(c *clientv3.Client) *MutingSource {
	return &MutingSource{Client: c, muted: make(chan struct{})}
}

// Watch is the client's Watch until Mute.
func (s *MutingSource) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	s.mu.Lock()
	muted := s.muted
	s.mu.Unlock()
	in, out := s.Client.Watch(ctx, key, opts...), make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			select {
			case <-muted: // what arrives after Mute, however soon, is dropped
			default:
				select {
				case out <- resp:
					if resp.IsProgressNotify() {
						s.progress.Add(1)
					}
					continue
				case <-muted:
				case <-ctx.Done():
					return
				}
			}
			<-ctx.Done()
			return
		}
	}()
	return out
}

// Progress is how many progress notifications the watches passed on.
func (s *MutingSource) Progress() int64 { return s.progress.Load() }

// Mute silences the watches open.
func (s *MutingSource) Mute() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.muted)
	s.muted = make(chan struct{})
}
