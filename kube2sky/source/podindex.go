package source

import (
	"slices"
	"sync"
)

// podIndex maps each pod address, "<ns>/<a-b-c-d>", to the pods that have
// it: nearly always one. client-go's indexer would keep a set (a Go map,
// ~200 bytes) of store keys per address; here an address holds one
// pointer, and the rare address two pods share (a pod being replaced)
// keeps the others in a map of its own.
type podIndex struct {
	mu    sync.Mutex
	first map[string]*podObject   // address -> a pod that has it
	more  map[string][]*podObject // address -> the other pods that have it
}

func newPodIndex() *podIndex {
	return &podIndex{first: map[string]*podObject{}, more: map[string][]*podObject{}}
}

// samePod reports whether a and b are versions of one pod.
func samePod(a, b *podObject) bool { return a.namespace == b.namespace && a.name == b.name }

// add files p under each of its addresses, in place of an older version
// of it.
func (ix *podIndex) add(p *podObject) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, a := range podAddresses(p) {
		cur, ok := ix.first[a]
		switch {
		case !ok || samePod(cur, p):
			ix.first[a] = p
		default:
			others := slices.DeleteFunc(slices.Clone(ix.more[a]), func(o *podObject) bool { return samePod(o, p) })
			ix.more[a] = append(others, p)
		}
	}
}

// remove takes p (any version of it) off each of its addresses.
func (ix *podIndex) remove(p *podObject) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, a := range podAddresses(p) {
		others := slices.DeleteFunc(slices.Clone(ix.more[a]), func(o *podObject) bool { return samePod(o, p) })
		if cur, ok := ix.first[a]; ok && samePod(cur, p) {
			if len(others) == 0 {
				delete(ix.first, a)
			} else {
				ix.first[a], others = others[0], others[1:]
			}
		}
		if len(others) == 0 {
			delete(ix.more, a)
		} else {
			ix.more[a] = others
		}
	}
}

// pods returns the pods that have address.
func (ix *podIndex) pods(address string) []*podObject {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	first, ok := ix.first[address]
	if !ok {
		return nil
	}
	return append([]*podObject{first}, ix.more[address]...)
}

// addresses returns every indexed address.
func (ix *podIndex) addresses() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]string, 0, len(ix.first))
	for a := range ix.first {
		out = append(out, a)
	}
	return out
}
