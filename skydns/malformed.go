package skydns

import (
	"hash/maphash"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// malformedSet remembers which keys hold a value that does not decode, and
// a hash of that value, so each bad value is reported once: a re-list that
// finds it again is quiet, a different bad value at the same key is new.
type malformedSet map[string]uint64

var malformedSeed = maphash.MakeSeed()

// malformedValue is one newly seen bad value.
type malformedValue struct {
	key   string
	value []byte
	err   error
}

// update applies u to the set and returns the values not seen before.
// anyBad says whether snapshot.Apply reported errors for u; when it did
// not, only the keys u touches are cleared, without decoding anything.
func (s *malformedSet) update(prefix string, u contract.Update, anyBad bool) []malformedValue {
	old := *s
	if u.Full || *s == nil {
		*s = malformedSet{}
	}
	var fresh []malformedValue
	for _, ev := range u.Events {
		seen, wasBad := old[ev.Key]
		delete(*s, ev.Key)
		if !anyBad || ev.Type != contract.Put || !strings.HasPrefix(ev.Key, prefix+"/") {
			continue
		}
		if _, err := contract.Decode(ev.Key, ev.Value); err != nil {
			h := maphash.Bytes(malformedSeed, ev.Value)
			if !wasBad || seen != h {
				fresh = append(fresh, malformedValue{key: ev.Key, value: ev.Value, err: err})
			}
			(*s)[ev.Key] = h
		}
	}
	return fresh
}
