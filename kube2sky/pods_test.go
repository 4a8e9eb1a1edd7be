package kube2sky

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const podKeys = "/skydns/local/cluster/pod/"

func verified(c *Config) { c.PodRecords = PodsVerified }

func runningPod(ns, name string, ips ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		p.Status.PodIP = ips[0]
	}
	return p
}

func (h *harness) createPod(p *corev1.Pod) {
	h.t.Helper()
	p.ResourceVersion = h.nextRV()
	if _, err := h.kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		h.t.Fatalf("create pod: %v", err)
	}
}

func (h *harness) updatePod(p *corev1.Pod) {
	h.t.Helper()
	p.ResourceVersion = h.nextRV()
	if _, err := h.kube.CoreV1().Pods(p.Namespace).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		h.t.Fatalf("update pod: %v", err)
	}
}

func (h *harness) deletePod(ns, name string) {
	h.t.Helper()
	if err := h.kube.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatalf("delete pod: %v", err)
	}
}

func TestVerifiedPodRecordsFollowThePods(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.add(runningPod("default", "before", "10.244.0.2")) // listed at start: the first full reconcile writes it
	r := h.start("a", verified)
	h.waitLeader(r)
	before := podKeys + "default/10-244-0-2 " + v("10.244.0.2")
	h.waitContents(before)

	web := runningPod("default", "web", "10.244.1.5", "fd00::5")
	h.createPod(web)
	h.waitContents(before, podKeys+"default/10-244-1-5 "+v("10.244.1.5"), podKeys+"default/fd00--5 "+v("fd00::5"))

	t.Run("a new IP replaces the old one", func(t *testing.T) {
		web.Status.PodIPs = []corev1.PodIP{{IP: "10.244.1.6"}}
		h.updatePod(web)
		h.waitContents(before, podKeys+"default/10-244-1-6 "+v("10.244.1.6"))
	})
	t.Run("host-network and finished pods get no record", func(t *testing.T) {
		host := runningPod("default", "host", "192.0.2.10")
		host.Spec.HostNetwork = true
		h.createPod(host)
		done := runningPod("default", "done", "10.244.1.6")
		done.Status.Phase = corev1.PodSucceeded
		h.createPod(done)
		web.Status.Phase = corev1.PodFailed
		h.updatePod(web)
		h.waitContents(before)
	})
	t.Run("a deleted pod's record goes", func(t *testing.T) {
		h.deletePod("default", "before")
		h.waitContents()
	})
}

func TestAPodAddressSharedByTwoPodsStaysUntilBothAreGone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start("a", verified)
	h.waitLeader(r)
	h.createPod(runningPod("ns", "a", "10.244.2.2"))
	h.createPod(runningPod("ns", "b", "10.244.2.2"))
	h.createPod(runningPod("other", "c", "10.244.2.2"))
	shared := podKeys + "ns/10-244-2-2 " + v("10.244.2.2")
	other := podKeys + "other/10-244-2-2 " + v("10.244.2.2")
	h.waitContents(shared, other)
	h.deletePod("ns", "a")
	h.createPod(runningPod("ns", "marker", "10.244.9.9")) // written after the delete was handled
	h.waitContents(shared, other, podKeys+"ns/10-244-9-9 "+v("10.244.9.9"))
	h.deletePod("ns", "b")
	h.waitContents(other, podKeys+"ns/10-244-9-9 "+v("10.244.9.9"))
}

func TestPodRecordsAreWrittenOnlyWhenVerified(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{PodsDisabled, PodsInsecure} {
		t.Run(mode+" writes none and removes the ones kube2sky wrote before", func(t *testing.T) {
			h := newHarness(t)
			h.add(runningPod("default", "web", "10.244.1.5"))
			h.etcd.Put(t, podKeys+"default/10-244-1-5", v("10.244.1.5"))         // owned: left from a verified run
			h.etcd.Put(t, podKeys+"default/10-244-7-7", `{"host":"10.244.7.7"}`) // by hand
			r := h.start("a", func(c *Config) { c.PodRecords = mode })
			h.waitLeader(r)
			h.waitContents(podKeys + `default/10-244-7-7 {"host":"10.244.7.7"}`)
		})
	}
	t.Run("verified leaves a hand-written record alone and deletes an owned orphan", func(t *testing.T) {
		h := newHarness(t)
		h.etcd.Put(t, podKeys+"default/10-244-7-7", `{"host":"10.244.7.7"}`)
		h.etcd.Put(t, podKeys+"gone/10-244-8-8", v("10.244.8.8"))
		r := h.start("a", verified)
		h.waitLeader(r)
		h.createPod(runningPod("default", "web", "10.244.7.7"))
		h.createPod(runningPod("default", "marker", "10.244.9.9"))
		h.waitContents(podKeys+`default/10-244-7-7 {"host":"10.244.7.7"}`, podKeys+"default/10-244-9-9 "+v("10.244.9.9"))
	})
}
