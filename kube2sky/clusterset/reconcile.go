package clusterset

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// work reconciles queued Services one at a time until the queue shuts
// down; a Service that fails, or comes between terms, is retried later.
func (p *Publisher) work(ctx context.Context) {
	for {
		name, shutdown := p.queue.Get()
		if shutdown {
			return
		}
		err := errors.New("no term: waiting for the cluster ID's claim")
		if t := p.term.Load(); t != nil {
			err = errors.Join(p.reconcile(ctx, t, name), p.imp.reconcile(ctx, name, p.ipsWriter(t)))
		}
		if err != nil && ctx.Err() == nil {
			p.log.Debug("clusterset export not reconciled", "service", name.String(), "err", err)
			p.queue.AddRateLimited(name)
		} else {
			p.queue.Forget(name)
		}
		p.queue.Done(name)
	}
}

// reconcile makes etcd and the ServiceExport's status say what the
// cluster holds for one Service.
func (p *Publisher) reconcile(ctx context.Context, t *term, name cs.ServiceName) error {
	se, err := p.exports.ServiceExports(name.Namespace).Get(name.Name)
	if isNotFound(err) {
		return p.withdraw(ctx, t, name)
	}
	if err != nil {
		return err
	}
	export, err := buildExport(se, p.service(name), p.slicesOf(name))
	var invalid *invalidError
	if errors.As(err, &invalid) {
		if err := p.withdraw(ctx, t, name); err != nil {
			return err
		}
		return p.setConditions(ctx, se, invalidConditions(invalid))
	}
	if err := p.publish(ctx, t, name, export); err != nil {
		return err
	}
	others, err := p.exportsOf(ctx, name)
	if err != nil {
		return err
	}
	reason, message := conflict(p.cfg.ClusterID, export, others)
	return p.setConditions(ctx, se, exportedConditions(reason, message))
}

func (p *Publisher) service(name cs.ServiceName) *corev1.Service {
	svc, err := p.services.Services(name.Namespace).Get(name.Name)
	if err != nil {
		return nil
	}
	return svc
}

func (p *Publisher) slicesOf(name cs.ServiceName) []*discoveryv1.EndpointSlice {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name.Name})
	slices, _ := p.slices.EndpointSlices(name.Namespace).List(sel)
	return slices
}

// publish puts the export unless this term already wrote the same value.
func (p *Publisher) publish(ctx context.Context, t *term, name cs.ServiceName, e cs.Export) error {
	return p.putOnce(ctx, t, t.written, p.exportKey(name), name, string(e.Encode()))
}

// withdraw deletes the export if this term holds one.
func (p *Publisher) withdraw(ctx context.Context, t *term, name cs.ServiceName) error {
	return p.deleteWritten(ctx, t, t.written, p.exportKey(name), name)
}

// ipsWriter writes this cluster's clusterset IPs of a name during term t:
// its import key, on t's lease, or its deletion when there are none.
func (p *Publisher) ipsWriter(t *term) ipsWriter {
	return func(ctx context.Context, name cs.ServiceName, ips []netip.Addr) error {
		key := cs.ImportKey(p.cfg.Prefix, cs.ExportID{Cluster: p.cfg.ClusterID, ServiceName: name})
		if len(ips) == 0 {
			return p.deleteWritten(ctx, t, t.imported, key, name)
		}
		return p.putOnce(ctx, t, t.imported, key, name, string(cs.Import{IPs: ips}.Encode()))
	}
}

func (p *Publisher) exportKey(name cs.ServiceName) string {
	return cs.ExportKey(p.cfg.Prefix, cs.ExportID{Cluster: p.cfg.ClusterID, ServiceName: name})
}

// putOnce puts value at key on t's lease unless written says this term put
// it already, and records it there.
func (p *Publisher) putOnce(ctx context.Context, t *term, written map[cs.ServiceName]string, key string, name cs.ServiceName, value string) error {
	if prev, ok := written[name]; ok && prev == value {
		return nil
	}
	if err := p.fenced(ctx, t, clientv3.OpPut(key, value, clientv3.WithLease(t.lease))); err != nil {
		return err
	}
	written[name] = value
	return nil
}

// deleteWritten deletes key if written says this term holds it.
func (p *Publisher) deleteWritten(ctx context.Context, t *term, written map[cs.ServiceName]string, key string, name cs.ServiceName) error {
	if _, ok := written[name]; !ok {
		return nil
	}
	if err := p.fenced(ctx, t, clientv3.OpDelete(key)); err != nil {
		return err
	}
	delete(written, name)
	return nil
}

// exportsOf reads the other clusters' exports of name. It lists every
// export: the layout is by cluster first so that a cluster's etcd role can
// be limited to its own keys.
func (p *Publisher) exportsOf(ctx context.Context, name cs.ServiceName) (map[string]cs.Export, error) {
	rctx, cancel := context.WithTimeout(ctx, p.requestTimeout())
	defer cancel()
	resp, err := p.store.Get(rctx, cs.ExportsPrefix(p.cfg.Prefix), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing the clusterset's exports: %w", err)
	}
	out := map[string]cs.Export{}
	for _, kv := range resp.Kvs {
		id, err := cs.ParseExportKey(p.cfg.Prefix, string(kv.Key))
		if err != nil || id.ServiceName != name {
			continue
		}
		e, err := cs.DecodeExport(string(kv.Key), kv.Value)
		if err != nil {
			p.log.Warn("malformed clusterset export ignored in the conflict check", "err", err)
			continue
		}
		out[id.Cluster] = e
	}
	return out, nil
}

func invalidConditions(e *invalidError) []metav1.Condition {
	return []metav1.Condition{
		condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, e.Reason, e.Message),
		condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending, "not exported: the export is not valid"),
	}
}

func exportedConditions(conflict mcsv1beta1.ServiceExportConditionReason, message string) []metav1.Condition {
	status := metav1.ConditionTrue
	if conflict == mcsv1beta1.ServiceExportReasonNoConflicts {
		status = metav1.ConditionFalse
	}
	return []metav1.Condition{
		condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid, "the Service can be exported"),
		condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported, "published in the clusterset's etcd"),
		condition(mcsv1beta1.ServiceExportConditionConflict, status, conflict, message),
	}
}

func condition(t mcsv1beta1.ServiceExportConditionType, s metav1.ConditionStatus, r mcsv1beta1.ServiceExportConditionReason, msg string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: string(r), Message: msg}
}

// setConditions writes the conditions into se's status if any changed.
func (p *Publisher) setConditions(ctx context.Context, se *mcsv1beta1.ServiceExport, conds []metav1.Condition) error {
	se = se.DeepCopy()
	changed := false
	for _, c := range conds {
		c.ObservedGeneration = se.Generation
		changed = meta.SetStatusCondition(&se.Status.Conditions, c) || changed
	}
	if !changed {
		return nil
	}
	_, err := p.mcs.MulticlusterV1beta1().ServiceExports(se.Namespace).UpdateStatus(ctx, se, metav1.UpdateOptions{})
	return err
}
