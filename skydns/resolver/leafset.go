package resolver

import (
	"bytes"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// leafSet remembers the data already answered for one name (an address or
// a text), so two keys holding the same data give one record. The first
// few are compared directly; a map takes over for large answers.
type leafSet struct {
	n     int
	first [16]*snapshot.Entry
	more  map[string]struct{}
}

// add reports whether e's data is new, and remembers it.
func (s *leafSet) add(e *snapshot.Entry) bool {
	for _, f := range s.first[:min(s.n, len(s.first))] {
		if sameLeaf(f, e) {
			return false
		}
	}
	if s.n < len(s.first) {
		s.first[s.n] = e
		s.n++
		return true
	}
	k := leafKey(e)
	if _, ok := s.more[k]; ok {
		return false
	}
	if s.more == nil {
		s.more = make(map[string]struct{})
	}
	s.more[k] = struct{}{}
	s.n++
	return true
}

func sameLeaf(x, y *snapshot.Entry) bool {
	if x.IP != nil {
		return bytes.Equal(x.IP, y.IP)
	}
	return x.Record.Text == y.Record.Text
}

func leafKey(e *snapshot.Entry) string {
	if e.IP != nil {
		return string(e.IP)
	}
	return e.Record.Text
}
