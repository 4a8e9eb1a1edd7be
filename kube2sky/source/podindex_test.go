package source

import (
	"net/netip"
	"slices"
	"testing"
)

func pod(ns, name string, ips ...string) *podObject {
	p := &podObject{namespace: ns, name: name}
	for _, ip := range ips {
		p.ips = append(p.ips, netip.MustParseAddr(ip))
	}
	return p
}

func TestPodIndexFilesEachAddressWithItsPods(t *testing.T) {
	ix := newPodIndex()
	a := pod("ns", "a", "10.0.0.1", "fd00::1")
	b := pod("ns", "b", "10.0.0.1") // the same address, briefly, as a pod being replaced
	ix.add(a)
	ix.add(b)
	ix.add(a) // a resync adds it again
	if got := podNames(ix.pods("ns/10-0-0-1")); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("pods of ns/10-0-0-1 = %q", got)
	}
	addrs := ix.addresses()
	slices.Sort(addrs)
	if want := []string{"ns/10-0-0-1", "ns/fd00--1"}; !slices.Equal(addrs, want) {
		t.Errorf("addresses %q, want %q", addrs, want)
	}
	held := ix.pods("ns/10-0-0-1")
	ix.remove(a)
	if got := podNames(held); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("a slice returned earlier changed to %q", got)
	}
	if got := podNames(ix.pods("ns/10-0-0-1")); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after removing a: %q", got)
	}
	ix.remove(b)
	if got := ix.addresses(); len(got) != 0 {
		t.Errorf("after removing both: %q left", got)
	}
}

func TestPodIndexKeepsTheNewestVersionOfEachPod(t *testing.T) {
	ix := newPodIndex()
	old, replacement := pod("ns", "a", "10.0.0.1"), pod("ns", "b", "10.0.0.1")
	ix.add(old)
	ix.add(replacement)
	newer := pod("ns", "b", "10.0.0.1")
	ix.add(newer)
	if got := ix.pods("ns/10-0-0-1"); len(got) != 2 || got[1] != newer {
		t.Errorf("after an update of b: %v, want a and b's newest version", podNames(got))
	}
	ix.remove(pod("ns", "a", "10.0.0.1")) // another version of a, as a tombstone carries
	if got := ix.pods("ns/10-0-0-1"); len(got) != 1 || got[0] != newer {
		t.Errorf("after removing a: %v, want b alone", podNames(got))
	}
	ix.remove(old) // a is no longer there: nothing changes
	if got := podNames(ix.pods("ns/10-0-0-1")); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after removing a again: %q", got)
	}
}

func podNames(pods []*podObject) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.name
	}
	return out
}
