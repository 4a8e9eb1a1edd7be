// Package plan is the pure middle of kube2sky: given the records a group
// should have and what etcd holds of it, it says what to change. It owns
// the rules of ownership (only keys with kube2sky's owner are changed or
// deleted; someone else's key in the way is counted, never touched) and
// the cutting of changes into Txns: one group's changes in one Txn when
// they fit, else every put before any delete; many groups packed into few
// Txns in a full reconcile. It does no I/O and holds no state.
package plan
