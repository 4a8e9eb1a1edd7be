package source

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// pagedPods answers pod lists from pages, the continue token naming the
// next page, and records every request's options.
func pagedPods(pages [][]corev1.Pod) (*fake.Clientset, *[]metav1.ListOptions) {
	kube := fake.NewClientset()
	var seen []metav1.ListOptions
	kube.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		seen = append(seen, opts)
		n := 0
		if opts.Continue != "" {
			fmt.Sscanf(opts.Continue, "page-%d", &n)
		}
		list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(100 + n)}, Items: pages[n]}
		if n+1 < len(pages) {
			list.Continue = fmt.Sprintf("page-%d", n+1)
		}
		return true, list, nil
	})
	return kube, &seen
}

// pageOf is a page of running pods.
func pageOf(pods ...*corev1.Pod) []corev1.Pod {
	out := make([]corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = *p
	}
	return out
}

func TestListPodsPagesAndKeepsOnlyWhatRecordsNeed(t *testing.T) {
	kube, seen := pagedPods([][]corev1.Pod{
		pageOf(runningPod("a", "p1", "10.0.0.1"), runningPod("a", "p2", "10.0.0.2")),
		pageOf(runningPod("b", "p3", "10.0.0.3")),
		pageOf(runningPod("b", "p4", "10.0.0.4")),
	})
	list, err := listPods(context.Background(), kube.CoreV1().Pods(""), metav1.ListOptions{ResourceVersion: "0", Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != "100" || list.Continue != "" {
		t.Errorf("list meta %+v, want the first page's resource version and no continue", list.ListMeta)
	}
	var keys []string
	for _, o := range list.Items {
		key, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		p := o.(*podObject)
		keys = append(keys, key+" "+p.ips[0].String())
	}
	if want := []string{"a/p1 10.0.0.1", "a/p2 10.0.0.2", "b/p3 10.0.0.3", "b/p4 10.0.0.4"}; !slices.Equal(keys, want) {
		t.Errorf("items %q, want %q", keys, want)
	}
	if len(*seen) != 3 {
		t.Fatalf("%d list requests, want 3", len(*seen))
	}
	for i, opts := range *seen {
		if opts.Limit != podPageSize || opts.FieldSelector != podFieldSelector || opts.ResourceVersion != "" {
			t.Errorf("request %d: %+v, want limit %d, the field selector and no resource version (\"0\" is served unpaged)", i, opts, podPageSize)
		}
	}
}

func TestListPodsKeepsAnExactResourceVersionOnTheFirstPageOnly(t *testing.T) {
	kube, seen := pagedPods([][]corev1.Pod{pageOf(runningPod("a", "p1", "10.0.0.1")), pageOf(runningPod("a", "p2", "10.0.0.2"))})
	opts := metav1.ListOptions{ResourceVersion: "42", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	if _, err := listPods(context.Background(), kube.CoreV1().Pods(""), opts); err != nil {
		t.Fatal(err)
	}
	if first := (*seen)[0]; first.ResourceVersion != "42" || first.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		t.Errorf("first request %+v, want resource version 42 not older than", first)
	}
	if next := (*seen)[1]; next.ResourceVersion != "" || next.ResourceVersionMatch != "" || next.Continue != "page-1" {
		t.Errorf("second request %+v, want only the continue token", next)
	}
}

func TestPodObjectCopiesAreIndependent(t *testing.T) {
	p := &podObject{namespace: "a", name: "p", ips: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}
	c := p.DeepCopyObject().(*podObject)
	c.ips[0] = netip.MustParseAddr("10.0.0.2")
	if p.ips[0].String() != "10.0.0.1" || c.namespace != "a" || c.name != "p" {
		t.Fatalf("copy %+v shares or lost state of %+v", c, p)
	}
	list := &podObjectList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []runtime.Object{p}}
	lc := list.DeepCopyObject().(*podObjectList)
	if lc.ResourceVersion != "7" || lc.Items[0] == list.Items[0] {
		t.Fatalf("list copy %+v shares its items", lc)
	}
}

// runningPod is a running pod with one IP.
func runningPod(ns, name, ip string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}}}
}
