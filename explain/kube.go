package explain

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// ObjectCheck is one object the query's keys stand for, as the API has it
// now, and the drift between its records and etcd's keys.
type ObjectCheck struct {
	Ref ObjectRef
	// Checked is false when the object was not fetched (no Kubernetes
	// client, or the fetch failed: Err).
	Checked bool
	Err     error
	// Found is false when the API has no such object: its keys are stale.
	Found           bool
	ResourceVersion string
	// Slices are the Service's EndpointSlices, "name@resourceVersion".
	Slices []string
	// Keys are the owned keys in etcd that stand for the object.
	Keys  []KV
	Drift Drift
}

// checkObject fetches ref and compares its records within q's keys with
// have, its keys in etcd. The zone's own record needs no fetch.
func checkObject(ctx context.Context, kube kubernetes.Interface, z records.Zone, q Query, ref ObjectRef, have []KV) ObjectCheck {
	c := ObjectCheck{Ref: ref, Keys: have}
	if ref.Kind == KindZone {
		c.Checked, c.Found = true, true
		c.Drift = Compare(inScope(q, []records.Entry{z.DNSVersion()}), have)
		return c
	}
	if kube == nil {
		return c
	}
	want, err := c.fetchService(ctx, kube, z)
	if err != nil {
		c.Err = err
		return c
	}
	c.Checked = true
	c.Drift = Compare(inScope(q, want), have)
	return c
}

// fetchService reads the Service and its EndpointSlices into c and returns
// the records the builder gives for them; none when the Service is gone.
func (c *ObjectCheck) fetchService(ctx context.Context, kube kubernetes.Interface, z records.Zone) ([]records.Entry, error) {
	svc, err := kube.CoreV1().Services(c.Ref.Namespace).Get(ctx, c.Ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s: %w", c.Ref, err)
	}
	c.Found, c.ResourceVersion = true, svc.ResourceVersion
	list, err := serviceSlices(ctx, kube, c.Ref.Namespace, c.Ref.Name)
	if err != nil {
		return nil, err
	}
	var eps []records.EndpointSlice
	for i := range list {
		s := &list[i]
		c.Slices = append(c.Slices, s.Name+"@"+s.ResourceVersion)
		eps = append(eps, records.EndpointSliceFrom(s))
	}
	slices.Sort(c.Slices)
	entries, _ := records.Build(z, records.ServiceFrom(svc), eps)
	return entries, nil
}

// inScope keeps the entries among q's keys.
func inScope(q Query, entries []records.Entry) []records.Entry {
	var out []records.Entry
	for _, e := range entries {
		if q.InScope(e.Key) {
			out = append(out, e)
		}
	}
	return out
}

// ReplicasFromSlices returns a replica for every ready address of the DNS
// Service's EndpointSlices: DNS on the port named "dns", HTTP (for the
// applied revision) on the port named "metrics".
func ReplicasFromSlices(list []discoveryv1.EndpointSlice) []Replica {
	var out []Replica
	for i := range list {
		dnsPort, httpPort := slicePort(&list[i], "dns"), slicePort(&list[i], "metrics")
		if dnsPort == "" {
			continue
		}
		for _, ep := range list[i].Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, addr := range ep.Addresses {
				r := Replica{DNS: net.JoinHostPort(addr, dnsPort)}
				if httpPort != "" {
					r.HTTP = net.JoinHostPort(addr, httpPort)
				}
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b Replica) int { return strings.Compare(a.DNS, b.DNS) })
	return slices.Compact(out)
}

func slicePort(s *discoveryv1.EndpointSlice, name string) string {
	for _, p := range s.Ports {
		if p.Name != nil && *p.Name == name && p.Port != nil {
			return strconv.Itoa(int(*p.Port))
		}
	}
	return ""
}

// DiscoverReplicas lists the EndpointSlices of the DNS Service
// namespace/name and returns its ready replicas.
func DiscoverReplicas(ctx context.Context, kube kubernetes.Interface, namespace, name string) ([]Replica, error) {
	list, err := serviceSlices(ctx, kube, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("finding the DNS replicas: %w", err)
	}
	return ReplicasFromSlices(list), nil
}

// serviceSlices lists the EndpointSlices of the Service namespace/name.
func serviceSlices(ctx context.Context, kube kubernetes.Interface, namespace, name string) ([]discoveryv1.EndpointSlice, error) {
	list, err := kube.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("listing the EndpointSlices of Service %s/%s: %w", namespace, name, err)
	}
	return list.Items, nil
}
