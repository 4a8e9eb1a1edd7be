package etcdstore

import clientv3 "go.etcd.io/etcd/client/v3"

// Permission is an etcd role's permission on the keys in [Key, End).
type Permission struct {
	Key, End string
	Type     clientv3.PermissionType
}

// PrefixPermissions are what a role needs to use every key under prefix
// with perm (read, or readwrite) through a ListWatcher: perm on the
// prefix, and read on to WatchedEnd, for the ranges its watch is opened
// again with after a stall, which etcd refuses unless the role's
// permissions cover them. A reader gets the one range [prefix,
// WatchedEnd); a writer writes the prefix alone.
func PrefixPermissions(prefix string, perm clientv3.PermissionType) []Permission {
	read := clientv3.PermissionType(clientv3.PermRead)
	end, watched := clientv3.GetPrefixRangeEnd(prefix), WatchedEnd(prefix)
	if perm == read {
		return []Permission{{prefix, watched, read}}
	}
	return []Permission{{prefix, end, perm}, {end, watched, read}}
}
