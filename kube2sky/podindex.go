package kube2sky

import (
	"slices"
	"sync"
)

// podIndex maps each pod address, "<ns>/<a-b-c-d>", to the store keys
// ("<ns>/<name>") of the pods that have it: nearly always one. client-go's
// indexer would keep a set (a Go map, ~200 bytes) per address; at 150,000
// pods a slice of one key is a fifth of that.
type podIndex struct {
	mu        sync.Mutex
	byAddress map[string][]string
}

func newPodIndex() *podIndex { return &podIndex{byAddress: map[string][]string{}} }

// podStoreKey is a pod's key in its informer's store.
func podStoreKey(p *podObject) string { return p.namespace + "/" + p.name }

// add files p under each of its addresses.
func (ix *podIndex) add(p *podObject) {
	key := podStoreKey(p)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, a := range podAddresses(p) {
		if keys := ix.byAddress[a]; !slices.Contains(keys, key) {
			ix.byAddress[a] = append(keys, key)
		}
	}
}

// remove takes p off each of its addresses.
func (ix *podIndex) remove(p *podObject) {
	key := podStoreKey(p)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, a := range podAddresses(p) {
		keys := slices.DeleteFunc(slices.Clone(ix.byAddress[a]), func(k string) bool { return k == key })
		if len(keys) == 0 {
			delete(ix.byAddress, a)
		} else {
			ix.byAddress[a] = keys
		}
	}
}

// pods returns the keys of the pods that have address.
func (ix *podIndex) pods(address string) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return slices.Clone(ix.byAddress[address])
}

// addresses returns every indexed address.
func (ix *podIndex) addresses() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]string, 0, len(ix.byAddress))
	for a := range ix.byAddress {
		out = append(out, a)
	}
	return out
}
