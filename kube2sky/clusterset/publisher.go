package clusterset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"
	mcsinformers "sigs.k8s.io/mcs-api/pkg/client/informers/externalversions"
	mcslisters "sigs.k8s.io/mcs-api/pkg/client/listers/apis/v1beta1"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
)

// Store is the part of an etcd client the publisher uses.
type Store interface {
	clientv3.KV
	clientv3.Lease
	clientv3.Watcher
}

var _ Store = (*clientv3.Client)(nil)

// defaultRequestTimeout bounds every etcd request when
// Config.RequestTimeout does not.
const defaultRequestTimeout = 5 * time.Second

// requestTimeout bounds every etcd request.
func (p *Publisher) requestTimeout() time.Duration {
	return cmp.Or(p.cfg.RequestTimeout, defaultRequestTimeout)
}

// Publisher publishes this cluster's exports; see the package doc.
type Publisher struct {
	cfg   Config
	store Store
	mcs   mcsclient.Interface
	log   *slog.Logger

	exports  mcslisters.ServiceExportLister
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	start    []func(<-chan struct{})
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[cs.ServiceName]
	// term is the claim being served; nil between terms.
	term atomic.Pointer[term]
	// imp keeps the ServiceImports and MCS EndpointSlices.
	imp *importer
}

// term is one claim of clusters/<cluster-id> on one lease. written and
// imported (the export and import values put in this term) are only
// touched by the worker goroutine.
type term struct {
	lease    clientv3.LeaseID
	written  map[cs.ServiceName]string
	imported map[cs.ServiceName]string
}

// New returns a publisher for cfg (its ClusterID set and valid).
func New(cfg Config, kube kubernetes.Interface, mcs mcsclient.Interface, store Store, log *slog.Logger) *Publisher {
	p := &Publisher{cfg: cfg, store: store, mcs: mcs, log: log,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cs.ServiceName]())}
	kf := informers.NewSharedInformerFactory(kube, 0)
	mf := mcsinformers.NewSharedInformerFactory(mcs, 0)
	p.exports = mf.Multicluster().V1beta1().ServiceExports().Lister()
	p.services = kf.Core().V1().Services().Lister()
	p.slices = kf.Discovery().V1().EndpointSlices().Lister()
	p.watch(mf.Multicluster().V1beta1().ServiceExports().Informer(), nameOf)
	p.watch(kf.Core().V1().Services().Informer(), serviceNameOf)
	p.watch(kf.Discovery().V1().EndpointSlices().Informer(), sliceServiceOf)
	p.imp = &importer{cluster: cfg.ClusterID, kube: kube, mcs: mcs, store: cs.NewStore(cfg.Prefix, cfg.ClusterID, p.malformed),
		namespaces: kf.Core().V1().Namespaces().Lister(), imports: mf.Multicluster().V1alpha1().ServiceImports().Lister(),
		slices: p.slices, services: p.services}
	p.watch(mf.Multicluster().V1alpha1().ServiceImports().Informer(), nameOf)
	p.watchNamespaces(kf.Core().V1().Namespaces().Informer())
	p.start = []func(<-chan struct{}){kf.Start, mf.Start}
	return p
}

// watchNamespaces queues the exported names of each namespace created.
func (p *Publisher) watchNamespaces(inf cache.SharedIndexInformer) {
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok {
			p.queueNames(p.imp.inNamespace(ns.Name))
		}
	}})
	p.synced = append(p.synced, inf.HasSynced)
}

func (p *Publisher) queueNames(names []cs.ServiceName) {
	for _, n := range names {
		p.queue.Add(n)
	}
}

func (p *Publisher) malformed(err error) {
	p.log.Warn("malformed clusterset record skipped", "err", err)
}

// watchExports lists and watches the clusterset prefix until ctx ends,
// queueing each name whose merged Service changed.
func (p *Publisher) watchExports(ctx context.Context) {
	lw := &etcdstore.ListWatcher{Source: p.store, Prefix: strings.TrimSuffix(p.cfg.Prefix, "/") + "/", Logger: p.log,
		RequestTimeout: p.requestTimeout(),
		OnUpdate:       func(u contract.Update) { p.queueNames(p.imp.apply(u)) }}
	_ = lw.Run(ctx) // ctx's error
}

// watch enqueues the Service each event of inf names.
func (p *Publisher) watch(inf cache.SharedIndexInformer, name func(any) (cs.ServiceName, bool)) {
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if n, ok := name(obj); ok {
			p.queue.Add(n)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, DeleteFunc: enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) }})
	p.synced = append(p.synced, inf.HasSynced)
}

func nameOf(obj any) (cs.ServiceName, bool) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	ns, name, ok := strings.Cut(key, "/")
	return cs.ServiceName{Namespace: ns, Name: name}, err == nil && ok
}

// serviceNameOf is the name of a Service, or of the ServiceImport a
// derived Service is kubesky's for.
func serviceNameOf(obj any) (cs.ServiceName, bool) {
	name, ok := nameOf(obj)
	if s, isService := obj.(*corev1.Service); isService && s.Labels[managedByLabel] == ManagedBy && s.Labels[mcsv1alpha1.LabelServiceName] != "" {
		name.Name = s.Labels[mcsv1alpha1.LabelServiceName]
	}
	return name, ok
}

// sliceServiceOf is the Service of a local EndpointSlice, or of an MCS
// EndpointSlice kubesky keeps.
func sliceServiceOf(obj any) (cs.ServiceName, bool) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return cs.ServiceName{}, false
	}
	name := s.Labels[discoveryv1.LabelServiceName]
	if s.Labels[discoveryv1.LabelManagedBy] == ManagedBy {
		name = s.Labels[mcsv1alpha1.LabelServiceName]
	}
	return cs.ServiceName{Namespace: s.Namespace, Name: name}, name != ""
}

// Run publishes until ctx ends: informers first, then one term after
// another, while one worker reconciles the queued Services.
func (p *Publisher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer p.queue.ShutDown() // before the wait: ends the worker
	for _, start := range p.start {
		start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), p.synced...) {
		return ctx.Err()
	}
	wg.Go(func() { p.work(ctx) })
	wg.Go(func() { p.resync(ctx) })
	wg.Go(func() { p.watchExports(ctx) })
	for ctx.Err() == nil {
		err := p.serveTerm(ctx)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, errClaimed): // a standby replica, or the previous process's lease
			p.log.Debug("waiting for the cluster ID's claim", "cluster", p.cfg.ClusterID, "err", err)
		default:
			p.log.Warn("clusterset term ended", "cluster", p.cfg.ClusterID, "err", err)
		}
		sleep(ctx, time.Second)
	}
	return nil
}

// resync queues every ServiceExport each ResyncPeriod.
func (p *Publisher) resync(ctx context.Context) {
	t := time.NewTicker(p.cfg.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.queueAll()
		}
	}
}

// queueAll queues every ServiceExport, every exported name of the
// clusterset and every name kubesky keeps imports of.
func (p *Publisher) queueAll() {
	all, _ := p.exports.List(labels.Everything())
	for _, se := range all {
		p.queue.Add(cs.ServiceName{Namespace: se.Namespace, Name: se.Name})
	}
	if v := p.imp.view.Load(); v != nil {
		p.queueNames(v.Names())
	}
	p.queueNames(p.imp.managed())
}

// serveTerm claims the cluster key, clears what an earlier term left that
// nothing explains, queues every export and serves until the lease is lost.
func (p *Publisher) serveTerm(ctx context.Context) error {
	t, err := p.claim(ctx)
	if err != nil {
		return err
	}
	termCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	alive, err := p.store.KeepAlive(termCtx, t.lease)
	if err != nil {
		return fmt.Errorf("keeping lease %x alive: %w", t.lease, err)
	}
	if err := p.clearUnexplained(ctx, t); err != nil {
		return err
	}
	p.term.Store(t)
	defer p.term.Store(nil)
	p.log.Info("publishing clusterset exports", "cluster", p.cfg.ClusterID, "lease", fmt.Sprintf("%x", t.lease), "ttl", p.cfg.LeaseTTL)
	p.queueAll()
	for range alive { // closes when the lease is lost or ctx ends
	}
	return fmt.Errorf("lease %x lost", t.lease)
}

// errClaimed says that another live publisher holds the cluster ID.
var errClaimed = errors.New("the cluster ID is claimed by another live publisher (another replica, the previous process until its lease expires, or another cluster given the same ID)")

// claim grants a lease and creates the cluster key on it, if no one holds it.
func (p *Publisher) claim(ctx context.Context) (*term, error) {
	rctx, cancel := context.WithTimeout(ctx, p.requestTimeout())
	defer cancel()
	lease, err := p.store.Grant(rctx, int64(p.cfg.LeaseTTL/time.Second))
	if err != nil {
		return nil, fmt.Errorf("granting a lease: %w", err)
	}
	key := cs.ClusterKey(p.cfg.Prefix, p.cfg.ClusterID)
	resp, err := p.store.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, fmt.Sprintf(`{"cluster":%q}`, p.cfg.ClusterID), clientv3.WithLease(lease.ID))).Commit()
	if err == nil && !resp.Succeeded {
		err = fmt.Errorf("%s: %w", key, errClaimed)
	}
	if err != nil {
		_, _ = p.store.Revoke(rctx, lease.ID)
		return nil, err
	}
	return &term{lease: lease.ID, written: map[cs.ServiceName]string{}, imported: map[cs.ServiceName]string{}}, nil
}

// clearUnexplained deletes this cluster's export keys without a
// ServiceExport (an earlier term's, whose lease outlived a crash), and
// queues the names of its import keys, to be put again or deleted.
func (p *Publisher) clearUnexplained(ctx context.Context, t *term) error {
	rctx, cancel := context.WithTimeout(ctx, p.requestTimeout())
	defer cancel()
	imports, err := p.store.Get(rctx, cs.ClusterImportsPrefix(p.cfg.Prefix, p.cfg.ClusterID), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("listing this cluster's imports: %w", err)
	}
	for _, kv := range imports.Kvs {
		if id, err := cs.ParseImportKey(p.cfg.Prefix, string(kv.Key)); err == nil {
			t.imported[id.ServiceName] = ""
			p.queue.Add(id.ServiceName)
		}
	}
	resp, err := p.store.Get(rctx, cs.ClusterExportsPrefix(p.cfg.Prefix, p.cfg.ClusterID), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("listing this cluster's exports: %w", err)
	}
	for _, kv := range resp.Kvs {
		id, err := cs.ParseExportKey(p.cfg.Prefix, string(kv.Key))
		if err == nil && p.exported(id.ServiceName) {
			t.written[id.ServiceName] = "" // queued: put again on this lease
			continue
		}
		if err := p.fenced(ctx, t, clientv3.OpDelete(string(kv.Key))); err != nil {
			return err
		}
	}
	return nil
}

func (p *Publisher) exported(name cs.ServiceName) bool {
	_, err := p.exports.ServiceExports(name.Namespace).Get(name.Name)
	return err == nil
}

// fenced applies op only while t's lease holds the cluster key.
func (p *Publisher) fenced(ctx context.Context, t *term, op clientv3.Op) error {
	rctx, cancel := context.WithTimeout(ctx, p.requestTimeout())
	defer cancel()
	key := cs.ClusterKey(p.cfg.Prefix, p.cfg.ClusterID)
	resp, err := p.store.Txn(rctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", t.lease)).Then(op).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", op.KeyBytes(), err)
	case !resp.Succeeded:
		return fmt.Errorf("%s: lease %x no longer holds %s", op.KeyBytes(), t.lease, key)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// isNotFound reports a lister's not-found error.
func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
