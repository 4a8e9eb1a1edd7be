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
// Records come in groups (kube2sky/group): one per Service (services.go), one per
// pod address (pods.go), one for the hosts ConfigMap (hostsmap.go), one for
// the kube-dns ConfigMap (kubednsmap.go). Each kind says what records a
// group should have and where in etcd they are. Events only enqueue a
// group's key. A worker reads the keys of the group and its PTR keys, and
// applies the puts and deletes that turn them into the desired set in one
// etcd Txn (sync.go); an unchanged group costs one read and no write. A
// full reconcile (full.go; after becoming leader, then every
// --resync-period) lists the zone and the reverse tree, diffs every group
// at once, deletes owned keys no group explains, and packs the changes of
// many groups into few Txns; the pod addresses, which may be hundreds of
// thousands, go after the rest in chunks over ranges of their keys
// (fullpods.go).
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
