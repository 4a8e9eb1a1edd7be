// Package leader is who may write etcd: replicas campaign with etcd's
// concurrency.Election under <prefix>/_kube2sky/leader/<owner-id>, and the
// one that wins serves a Term until its lease is lost, a write is fenced
// off, or etcd has not answered for a whole lease. A Term's Fence (the
// create revision of the winner's election key) conditions every write
// Txn, so a replica that lost its lease cannot write. A replica stopped
// cleanly revokes its lease, and a standby takes over at once; one without
// leader election leads alone, with the zero fence. The loop asks one
// question of it: Wait for the current term.
package leader
