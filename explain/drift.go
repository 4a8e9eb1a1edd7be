package explain

import (
	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// Drift is how etcd's keys of one object, within a query's keys, differ
// from the records kube2sky's builder gives for the object now.
type Drift struct {
	// Same counts the keys whose value is what the builder gives.
	Same int
	// Missing are records the builder gives that etcd does not hold.
	Missing []records.Entry
	// Extra are owned keys in etcd the builder does not give.
	Extra []KV
	// Changed are keys whose value differs.
	Changed []Change
}

// Change is one key whose value in etcd is not the one built.
type Change struct {
	Key        string
	Have, Want string
}

// None reports whether etcd holds exactly what the builder gives.
func (d Drift) None() bool {
	return len(d.Missing) == 0 && len(d.Extra) == 0 && len(d.Changed) == 0
}

// Compare compares want, the built records within a query's keys, with
// have, etcd's keys of the same object there. Values are compared as
// records, so a value that encodes the same record differently is the
// same; a value that is not a valid record differs.
func Compare(want []records.Entry, have []KV) Drift {
	var d Drift
	byKey := make(map[string]KV, len(have))
	for _, kv := range have {
		byKey[kv.Key] = kv
	}
	for _, e := range want {
		kv, ok := byKey[e.Key]
		delete(byKey, e.Key)
		switch {
		case !ok:
			d.Missing = append(d.Missing, e)
		case sameRecord(kv, e.Record):
			d.Same++
		default:
			d.Changed = append(d.Changed, Change{Key: e.Key, Have: kv.Value, Want: string(e.Record.Encode())})
		}
	}
	for _, kv := range have {
		if _, left := byKey[kv.Key]; left {
			d.Extra = append(d.Extra, kv)
		}
	}
	return d
}

func sameRecord(kv KV, want contract.Record) bool {
	r, err := contract.Decode(kv.Key, []byte(kv.Value))
	return err == nil && r == want
}
