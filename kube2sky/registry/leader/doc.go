// Package leader is who may write etcd: replicas queue under
// <prefix>/_kube2sky/leader/<owner-id>, one key per session lease (the
// keys of etcd's concurrency.Election), and the oldest key leads. The
// winner serves a Term until its lease is lost, a write is fenced off, or
// etcd has not answered for a whole lease. A Term's Fence (the create
// revision of the winner's election key) conditions every write Txn, so a
// replica that lost its lease cannot write. Waiting for one's turn gives
// every request a deadline and only reads the queue again after a watch
// is refused (a compaction, a member without a leader), so a standby leads
// within a lease of its predecessor's end. A replica stopped cleanly
// revokes its lease, and a standby takes over at once; one without leader
// election leads alone, with the zero fence. The loop asks one question of
// it: Wait for the current term.
package leader
