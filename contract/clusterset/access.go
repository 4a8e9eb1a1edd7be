package clusterset

// KeyRange is the etcd keys from Key up to, not including, End; an empty
// End is Key alone (etcd's range_end).
type KeyRange struct{ Key, End string }

// PrefixRange is every key that starts with p.
func PrefixRange(p string) KeyRange { return KeyRange{Key: p, End: prefixEnd(p)} }

// ReadRange is every clusterset key: what every reader, each skydns and
// each kube2sky, lists and watches.
func ReadRange(prefix string) KeyRange { return PrefixRange(trim(prefix) + "/") }

// ClusterWriteRanges are the keys a cluster's publisher puts, deletes and
// attaches to its lease: its cluster key, its exports and its imports.
// Nothing else of the prefix is its to write.
func ClusterWriteRanges(prefix, cluster string) []KeyRange {
	return []KeyRange{{Key: ClusterKey(prefix, cluster)},
		PrefixRange(ClusterExportsPrefix(prefix, cluster)), PrefixRange(ClusterImportsPrefix(prefix, cluster))}
}

// prefixEnd is the first key after every key that starts with p.
func prefixEnd(p string) string {
	end := []byte(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return string(end[:i+1])
		}
	}
	return "\x00" // every key
}
