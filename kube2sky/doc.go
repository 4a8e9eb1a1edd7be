// Package kube2sky is the bridge from the Kubernetes API to the SkyDNS
// records in etcd: a level-triggered controller that watches Services and
// EndpointSlices, computes each Service's desired records with the pure
// function in kube2sky/records, compares them with what etcd holds and
// applies the difference in one fenced transaction.
//
// # Ownership
//
// Every value kube2sky writes carries "owner": <owner-id>. It only ever
// changes or deletes keys with its own owner, so records added by hand with
// etcdctl (no owner) and records of another kube2sky (another owner) are left
// alone, even where they sit on a key kube2sky would write.
//
// # Reconciling
//
// Events only enqueue a Service's "namespace/name". A worker reads the keys
// under the Service's subtree and its PTR keys, and applies the puts and
// deletes that turn them into the desired set in one etcd Txn; an unchanged
// Service costs one read and no write. A full reconcile (after becoming
// leader, then every --resync-period) lists the zone and the reverse tree,
// diffs every Service at once, deletes owned keys no Service explains, and
// packs the changes of many Services into few Txns.
//
// # PTR records claimed twice
//
// A PTR key is exact, so when two Services claim one address (a pod behind
// two headless Services) one must win: the Service whose "namespace/name"
// sorts first. An in-memory index of every Service's claims, rebuilt by each
// full reconcile, decides it; when the winner stops claiming the address the
// next claimant is reconciled and takes the key over.
//
// # Leader election and fencing
//
// Replicas campaign with etcd's concurrency.Election under
// <prefix>/_kube2sky/leader/<owner-id>. Only the leader writes, and every
// write Txn compares the create revision of the leader's election key, so a
// replica that lost its lease cannot write. Standbys keep their informers
// warm and take over with a full reconcile.
package kube2sky
