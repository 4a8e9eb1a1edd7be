// Package registry is kube2sky's side of etcd: what etcd holds, and the
// conditions every write is made on. Its Store reads a group's keys, lists whole subtrees page
// by page at one revision, and commits changes in Txns that each hold
// only if every key is as it was read and the writer's Fence (the create
// revision of its election key) still stands: a deposed leader's write
// fails with ErrNotLeader, a concurrent change with ErrConflict. Its Probe
// watches whether etcd answers, which readiness, the leader's stepping
// down and the retries after an outage go by.
package registry
