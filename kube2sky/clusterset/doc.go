// Package clusterset is the publishing half of Multi-Cluster Services: it
// watches this cluster's ServiceExports (sigs.k8s.io/mcs-api v1beta1), their
// Services and ready EndpointSlices, and writes one export per Service into
// the shared etcd under this cluster's ID (contract/clusterset), every key
// on one lease. It sets each ServiceExport's Valid, Ready and Conflict
// conditions.
//
// It is the importing half too: it lists and watches the whole prefix,
// merges every cluster's exports (contract/clusterset's View) and keeps one
// ServiceImport (v1alpha1) per exported name in each namespace this cluster
// has, and EndpointSlices of the other clusters' ready endpoints labelled
// multicluster.kubernetes.io/service-name and source-cluster, managed by
// kubesky. Both halves share one queue of names and one worker, which
// writes only while this process holds the cluster's claim.
//
// It runs inside kube2sky (--clusterset-prefix) because it needs what
// kube2sky already holds: the API server connection and informers' RBAC, and
// an etcd client; but it is a package of its own because its writes follow
// other rules than the zone's records: one lease per cluster instead of the
// leader's, a term begun by claiming clusters/<cluster-id> (so two replicas,
// or two clusters given one ID, never publish together), and every write
// fenced on that claim.
//
// A term ends when the lease cannot be renewed; a new one claims the key
// again and rewrites every export. When kube2sky stops, nothing is revoked:
// the exports expire with the lease, so a restart within the TTL keeps
// them answered.
package clusterset
