package resolver

// set remembers keys seen while building one answer: a short list while
// small, a map once it grows.
type set[K comparable] struct {
	list []K
	m    map[K]struct{}
}

const setListMax = 16

// add reports whether k is new, and remembers it.
func (s *set[K]) add(k K) bool {
	if s.m != nil {
		if _, ok := s.m[k]; ok {
			return false
		}
		s.m[k] = struct{}{}
		return true
	}
	for _, x := range s.list {
		if x == k {
			return false
		}
	}
	s.list = append(s.list, k)
	if len(s.list) > setListMax {
		s.m = make(map[K]struct{}, 2*len(s.list))
		for _, x := range s.list {
			s.m[x] = struct{}{}
		}
	}
	return true
}
