package skydns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/kubesky/kubesky/skydns/nodelocal"
	"github.com/kubesky/kubesky/skydns/sockshare"
)

// nodeLocalRetry is how often node-local mode retries a setup that failed.
const nodeLocalRetry = 3 * time.Second

// errNotSynced is node-local mode waiting for the first full snapshot.
var errNotSynced = errors.New("waiting for the first full snapshot from etcd")

// nodeLocalState is node-local mode's progress: why DNS is not bound yet,
// and the goroutine that binds it.
type nodeLocalState struct {
	mu       sync.Mutex // guards notBound
	notBound error      // nil once DNS is bound

	cancel context.CancelFunc
	done   chan struct{}

	sharer *sockshare.Sharer // shares the UDP sockets with the peers; nil without
}

func (s *nodeLocalState) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notBound = err
}

// err is why DNS is not bound, nil once it is.
func (s *nodeLocalState) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notBound
}

// startNodeLocal sets the node up and binds DNS once the mirror holds a
// full snapshot, retrying every nodeLocalRetry until it has, in the
// background: a failure leaves the daemon running and not ready.
func (d *Daemon) startNodeLocal() {
	ctx, cancel := context.WithCancel(context.Background())
	d.nodeLocal.cancel, d.nodeLocal.done = cancel, make(chan struct{})
	go func() {
		defer close(d.nodeLocal.done)
		d.runNodeLocal(ctx)
	}()
}

// stopNodeLocal stops trying to bind DNS and waits until it has stopped.
func (d *Daemon) stopNodeLocal() {
	if d.nodeLocal.cancel != nil {
		d.nodeLocal.cancel()
		<-d.nodeLocal.done
	}
}

// stopSharing ends the socket sharing: the peers then answer what this
// process's sockets still hold.
func (d *Daemon) stopSharing() {
	if d.nodeLocal.sharer != nil {
		d.nodeLocal.sharer.Close()
	}
}

func (d *Daemon) runNodeLocal(ctx context.Context) {
	var logged string
	setUp := false
	for {
		err := d.bindNodeLocal(&setUp)
		if err == nil {
			d.nodeLocal.set(nil)
			return
		}
		err = fmt.Errorf("DNS not bound on %s: %w", d.cfg.DNSAddr, err)
		d.nodeLocal.set(err)
		if err.Error() != logged {
			d.logger.Error("node-local: not serving DNS, retrying", "every", nodeLocalRetry, "err", err)
			logged = err.Error()
		}
		if !d.waitNodeLocalRetry(ctx, errors.Is(err, errNotSynced)) {
			return
		}
	}
}

// waitNodeLocalRetry waits nodeLocalRetry, or less when the mirror syncs
// and forSync; false when ctx ended.
func (d *Daemon) waitNodeLocalRetry(ctx context.Context, forSync bool) bool {
	var synced <-chan struct{}
	if forSync {
		synced = d.mirror.Synced()
	}
	t := time.NewTimer(nodeLocalRetry)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-synced:
	}
	return true
}

// bindNodeLocal sets the node up (unless *setUp), then binds DNS if the
// mirror has synced.
func (d *Daemon) bindNodeLocal(setUp *bool) error {
	if !*setUp {
		addr, _ := nodeLocalAddr(d.cfg.DNSAddr) // checked by Validate
		err := nodelocal.Setup(nodelocal.Config{Interface: d.cfg.NodeLocal.Interface, Addr: addr, Notrack: d.cfg.NodeLocal.Notrack,
			Logger: d.logger.With("component", "node-local")})
		if err != nil {
			return fmt.Errorf("setting up the node: %w", err)
		}
		*setUp = true
		d.logger.Info("node-local address set up", "interface", d.cfg.NodeLocal.Interface, "addr", addr, "notrack", d.cfg.NodeLocal.Notrack)
	}
	if err := d.mirror.Ready(); err != nil {
		return fmt.Errorf("%w: %w", errNotSynced, err)
	}
	if err := d.startDNS(d.nodeLocalDNS); err != nil {
		return err
	}
	d.shareSockets()
	return nil
}

// shareSockets shares the UDP sockets with the other skydns of
// --node-local-peers, if set, and answers what a gone one's hold. DNS
// serves either way: a failure is logged.
func (d *Daemon) shareSockets() {
	if d.cfg.NodeLocal.PeerDir == "" {
		return
	}
	srv := d.dnsServer()
	logger := d.logger.With("component", "node-local")
	adopt := func(ctx context.Context, conns []*net.UDPConn) {
		if err := srv.Adopt(ctx, conns); err != nil && ctx.Err() == nil {
			logger.Warn("answering a gone peer's queued queries", "err", err)
			return
		}
		logger.Info("a gone peer's queued queries answered, its sockets closed", "sockets", len(conns))
	}
	s, err := sockshare.Start(sockshare.Config{Dir: d.cfg.NodeLocal.PeerDir, Conns: srv.UDPConns(), Adopt: adopt, Logger: logger})
	if err != nil {
		logger.Error("not sharing the UDP sockets: a kill -9 loses the queries queued in them", "err", err)
		return
	}
	d.nodeLocal.sharer = s
}

// stepAside, on a stop signal in node-local mode, turns /readyz 503 and
// hands the address over to another skydns sharing it (see
// dnsserver.Server.StepAside); true when it did, and the listeners may
// close at once.
func (d *Daemon) stepAside() bool {
	d.lameduck.Store(true)
	d.stopNodeLocal()
	srv := d.dnsServer()
	if srv == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownTimeout)
	defer cancel()
	handed, _ := srv.StepAside(ctx) // logged by StepAside
	return handed
}
