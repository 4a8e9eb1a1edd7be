// Package kube2sky is the bridge from the Kubernetes API to the SkyDNS
// records in etcd: a level-triggered loop between what the cluster says
// and what etcd holds. It owns the configuration (Config, its flags),
// Run, and the loop itself (loop.go): the work queue, the reconcile of one
// group, each term's full reconciles with the garbage collection of owned
// keys nothing explains, the index of PTR winners, the metrics and the
// HTTP endpoints.
//
// # The parts
//
// The loop holds each part through a narrow interface (parts.go):
//
//   - kube2sky/source: what the cluster says. Informers over Services,
//     EndpointSlices, Pods and ConfigMaps, and the record groups built
//     from their caches; an event calls back with the key of a group
//     gone stale.
//   - kube2sky/registry: what etcd holds. Reads, paged scans and Txns
//     fenced on leadership and on every key's mod revision; whether etcd
//     answers.
//   - kube2sky/registry/leader: who may write. The election and its
//     terms.
//   - kube2sky/plan: the pure difference between what a group should
//     hold and what etcd holds, and its cutting into Txns.
//   - kube2sky/group: the words they share (group keys, desired records).
//   - kube2sky/records, kube2sky/hosts, kube2sky/kubedns: the pure
//     functions from API objects and ConfigMap text to records.
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
// Records come in groups (kube2sky/group): one per Service, one per pod
// address, one for the hosts ConfigMap, one for the kube-dns ConfigMap,
// one for the zone's name servers. The source says what records a group
// should have and where in etcd they are. Events only enqueue a group's
// key. A worker reads the keys of the group and its PTR keys, and applies
// the puts and deletes that turn them into the desired set in one etcd
// Txn (loop.go); an unchanged group costs one read and no write. A full
// reconcile (full.go; after becoming leader, then every --resync-period)
// lists the zone and the reverse tree, diffs every group at once, deletes
// owned keys no group explains, and packs the changes of many groups into
// few Txns; the Services and the pod addresses, which may be hundreds of
// thousands, go in chunks over ranges of their keys (fullchunks.go).
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
// Only the leader writes (kube2sky/registry/leader), and every write Txn
// compares the create revision of the leader's election key, so a replica
// that lost its lease cannot write. Standbys keep their informers warm and
// take over with a full reconcile.
package kube2sky
