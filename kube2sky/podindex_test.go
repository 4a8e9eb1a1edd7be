package kube2sky

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
	if got := ix.pods("ns/10-0-0-1"); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
		t.Errorf("pods of ns/10-0-0-1 = %q", got)
	}
	addrs := ix.addresses()
	slices.Sort(addrs)
	if want := []string{"ns/10-0-0-1", "ns/fd00--1"}; !slices.Equal(addrs, want) {
		t.Errorf("addresses %q, want %q", addrs, want)
	}
	held := ix.pods("ns/10-0-0-1")
	ix.remove(a)
	if !slices.Equal(held, []string{"ns/a", "ns/b"}) {
		t.Errorf("a slice returned earlier changed to %q", held)
	}
	if got := ix.pods("ns/10-0-0-1"); !slices.Equal(got, []string{"ns/b"}) {
		t.Errorf("after removing a: %q", got)
	}
	ix.remove(b)
	if got := ix.addresses(); len(got) != 0 {
		t.Errorf("after removing both: %q left", got)
	}
}
