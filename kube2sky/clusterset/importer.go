package clusterset

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"
	mcslisters "sigs.k8s.io/mcs-api/pkg/client/listers/apis/v1alpha1"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// importer keeps this cluster's ServiceImports (v1alpha1, the version
// CoreDNS's multicluster option reads) and MCS EndpointSlices equal to the
// merged view of every cluster's exports. It only writes while the
// publisher holds the cluster's claim, from the publisher's worker.
type importer struct {
	cluster    string
	kube       kubernetes.Interface
	mcs        mcsclient.Interface
	namespaces corelisters.NamespaceLister
	imports    mcslisters.ServiceImportLister
	slices     discoverylisters.EndpointSliceLister
	services   corelisters.ServiceLister
	// store is only touched by the ListWatcher's goroutine (apply).
	store *cs.Store
	// view is the newest merged view; nil until the first list.
	view atomic.Pointer[cs.View]
}

var errNoView = errors.New("the clusterset's exports are not listed yet")

// apply takes an update of the prefix and returns the names whose merged
// Service changed.
func (im *importer) apply(u contract.Update) []cs.ServiceName {
	im.store.Apply(u)
	next := im.store.View()
	prev := im.view.Swap(next)
	var changed []cs.ServiceName
	for _, name := range next.Names() {
		if prev == nil || !reflect.DeepEqual(prev.Service(name), next.Service(name)) {
			changed = append(changed, name)
		}
	}
	if prev != nil {
		for _, name := range prev.Names() {
			if next.Service(name) == nil {
				changed = append(changed, name)
			}
		}
	}
	return changed
}

// ipsWriter publishes this cluster's clusterset IPs of a name in etcd;
// none deletes them.
type ipsWriter func(ctx context.Context, name cs.ServiceName, ips []netip.Addr) error

// managed are the names of every ServiceImport, derived Service and MCS
// EndpointSlice kubesky keeps in this cluster.
func (im *importer) managed() []cs.ServiceName {
	var out []cs.ServiceName
	ours := labels.SelectorFromSet(labels.Set{managedByLabel: ManagedBy})
	sis, _ := im.imports.List(ours)
	for _, si := range sis {
		out = append(out, cs.ServiceName{Namespace: si.Namespace, Name: si.Name})
	}
	derived, _ := im.services.List(ours)
	for _, d := range derived {
		out = append(out, cs.ServiceName{Namespace: d.Namespace, Name: d.Labels[mcsv1alpha1.LabelServiceName]})
	}
	eps, _ := im.slices.List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelManagedBy: ManagedBy}))
	for _, s := range eps {
		out = append(out, cs.ServiceName{Namespace: s.Namespace, Name: s.Labels[mcsv1alpha1.LabelServiceName]})
	}
	return out
}

// inNamespace are the view's names in namespace ns.
func (im *importer) inNamespace(ns string) []cs.ServiceName {
	v := im.view.Load()
	if v == nil {
		return nil
	}
	var out []cs.ServiceName
	for _, name := range v.Names() {
		if name.Namespace == ns {
			out = append(out, name)
		}
	}
	return out
}

// reconcile makes name's ServiceImport, derived Service, MCS EndpointSlices
// and clusterset IPs in etcd (through writeIPs) say what the view holds; a
// namespace this cluster lacks gets none.
func (im *importer) reconcile(ctx context.Context, name cs.ServiceName, writeIPs ipsWriter) error {
	v := im.view.Load()
	if v == nil {
		return errNoView
	}
	if _, err := im.namespaces.Get(name.Namespace); isNotFound(err) {
		return writeIPs(ctx, name, nil) // its derived Service went with the namespace
	}
	svc := v.Service(name)
	switch {
	case svc == nil:
		return errors.Join(im.deleteImport(ctx, name), im.applySlices(ctx, name, nil), im.deleteDerived(ctx, name), writeIPs(ctx, name, nil))
	case svc.Type == cs.ClusterSetIP:
		return im.reconcileClusterSetIP(ctx, name, svc, writeIPs)
	}
	_, err := im.applyImport(ctx, desiredImport(name, svc, nil))
	return errors.Join(err, im.deleteDerived(ctx, name), writeIPs(ctx, name, nil), im.applySlices(ctx, name, desiredSlices(name, svc, "")))
}

// reconcileClusterSetIP keeps the ServiceImport, then the Service derived
// from it (which needs its UID), then the derived Service's IPs in etcd and
// in the import, and the import's slices.
func (im *importer) reconcileClusterSetIP(ctx context.Context, name cs.ServiceName, svc *cs.Service, writeIPs ipsWriter) error {
	derived, err := im.services.Services(name.Namespace).Get(derivedName(name))
	if err != nil && !isNotFound(err) {
		return err
	}
	if derived != nil && !isDerivedFor(derived, name) {
		derived = nil // applyDerived says whose it is
	}
	si, err := im.applyImport(ctx, desiredImport(name, svc, clusterIPs(derived)))
	if err != nil || si == nil { // nil: a ServiceImport kubesky did not make
		return err
	}
	if derived, err = im.applyDerived(ctx, desiredDerived(name, svc, si)); err != nil {
		return err
	}
	ips := clusterIPs(derived) // in etcd first: the name answers without waiting for two more API writes
	return errors.Join(writeIPs(ctx, name, ips), im.setImportIPs(ctx, si, ips), im.applySlices(ctx, name, desiredSlices(name, svc, derived.Name)))
}

// applyImport creates or updates the ServiceImport, its spec then its
// status, and returns it; one kubesky did not make is left alone (nil).
func (im *importer) applyImport(ctx context.Context, want *mcsv1alpha1.ServiceImport) (*mcsv1alpha1.ServiceImport, error) {
	client := im.mcs.MulticlusterV1alpha1().ServiceImports(want.Namespace)
	cur, err := im.imports.ServiceImports(want.Namespace).Get(want.Name)
	switch {
	case isNotFound(err):
		created, err := client.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		created.Status = want.Status
		return client.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	case err != nil:
		return nil, err
	case cur.Labels[managedByLabel] != ManagedBy:
		return nil, nil
	}
	if !equality.Semantic.DeepEqual(cur.Spec, want.Spec) {
		next := cur.DeepCopy()
		next.Spec = want.Spec
		if cur, err = client.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
	}
	if equality.Semantic.DeepEqual(cur.Status.Clusters, want.Status.Clusters) {
		return cur, nil
	}
	next := cur.DeepCopy()
	next.Status.Clusters = want.Status.Clusters
	return client.UpdateStatus(ctx, next, metav1.UpdateOptions{})
}

// setImportIPs writes ips into si's spec unless it holds them already.
func (im *importer) setImportIPs(ctx context.Context, si *mcsv1alpha1.ServiceImport, ips []netip.Addr) error {
	next := si.DeepCopy()
	setIPs(&next.Spec, ips)
	if equality.Semantic.DeepEqual(next.Spec, si.Spec) {
		return nil
	}
	_, err := im.mcs.MulticlusterV1alpha1().ServiceImports(si.Namespace).Update(ctx, next, metav1.UpdateOptions{})
	return err
}

// applyDerived creates or updates the derived Service and returns it. A
// cluster without the export's IP families gets its default ones.
func (im *importer) applyDerived(ctx context.Context, want *corev1.Service) (*corev1.Service, error) {
	client := im.kube.CoreV1().Services(want.Namespace)
	cur, err := im.services.Services(want.Namespace).Get(want.Name)
	switch {
	case isNotFound(err):
		created, err := client.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsInvalid(err) && len(want.Spec.IPFamilies) > 0 {
			want.Spec.IPFamilies = nil
			created, err = client.Create(ctx, want, metav1.CreateOptions{})
		}
		return created, err
	case err != nil:
		return nil, err
	case !isDerivedFor(cur, cs.ServiceName{Namespace: want.Namespace, Name: want.Labels[mcsv1alpha1.LabelServiceName]}):
		return nil, fmt.Errorf("Service %s/%s exists and is not kubesky's derived Service of %s", cur.Namespace, cur.Name, want.Labels[mcsv1alpha1.LabelServiceName])
	case sameDerived(cur, want):
		return cur, nil
	}
	return client.Update(ctx, updatedDerived(cur, want), metav1.UpdateOptions{})
}

// deleteDerived deletes kubesky's derived Service of name, if any.
func (im *importer) deleteDerived(ctx context.Context, name cs.ServiceName) error {
	cur, err := im.services.Services(name.Namespace).Get(derivedName(name))
	if isNotFound(err) || (err == nil && !isDerivedFor(cur, name)) {
		return nil
	}
	if err != nil {
		return err
	}
	err = im.kube.CoreV1().Services(name.Namespace).Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID}})
	if isNotFound(err) {
		return nil
	}
	return err
}

// deleteImport deletes kubesky's ServiceImport of name, if any.
func (im *importer) deleteImport(ctx context.Context, name cs.ServiceName) error {
	cur, err := im.imports.ServiceImports(name.Namespace).Get(name.Name)
	if isNotFound(err) || (err == nil && cur.Labels[managedByLabel] != ManagedBy) {
		return nil
	}
	if err != nil {
		return err
	}
	err = im.mcs.MulticlusterV1alpha1().ServiceImports(name.Namespace).Delete(ctx, name.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID}})
	if isNotFound(err) {
		return nil
	}
	return err
}

// applySlices creates, updates and deletes kubesky's MCS EndpointSlices of
// name until they are want.
func (im *importer) applySlices(ctx context.Context, name cs.ServiceName, want []*discoveryv1.EndpointSlice) error {
	client := im.kube.DiscoveryV1().EndpointSlices(name.Namespace)
	sel := labels.SelectorFromSet(labels.Set{mcsv1alpha1.LabelServiceName: name.Name, discoveryv1.LabelManagedBy: ManagedBy})
	cur, err := im.slices.EndpointSlices(name.Namespace).List(sel)
	if err != nil {
		return err
	}
	have := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range cur {
		have[s.Name] = s
	}
	var errs []error
	for _, s := range want {
		old, ok := have[s.Name]
		delete(have, s.Name)
		switch {
		case !ok:
			_, err = client.Create(ctx, s, metav1.CreateOptions{})
		case !sameSlice(old, s):
			s.ResourceVersion = old.ResourceVersion
			_, err = client.Update(ctx, s, metav1.UpdateOptions{})
		default:
			err = nil
		}
		errs = append(errs, err)
	}
	for n := range have {
		if err := client.Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sameSlice(a, b *discoveryv1.EndpointSlice) bool {
	return equality.Semantic.DeepEqual(a.Labels, b.Labels) && a.AddressType == b.AddressType &&
		equality.Semantic.DeepEqual(a.Endpoints, b.Endpoints) && equality.Semantic.DeepEqual(a.Ports, b.Ports)
}
