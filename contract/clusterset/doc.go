// Package clusterset is the record contract of Multi-Cluster Services in the
// shared etcd, with no I/O: the keys, the JSON of an export and of an import,
// and their validation. kube2sky/clusterset writes exports; skydns/clusterset
// reads them all and answers clusterset.local.
//
// # Key layout
//
// Under the prefix (default "/clusterset"), outside the SkyDNS tree so no
// SkyDNS reader takes these values for records:
//
//	/clusterset/clusters/<cluster-id>             = {"cluster":"<cluster-id>"}   on the cluster's lease
//	/clusterset/exports/<cluster-id>/<ns>/<svc>   = Export JSON                  on the cluster's lease
//	/clusterset/imports/<cluster-id>/<ns>/<svc>   = {"ips":["10.96.4.7"]}         on the cluster's lease
//
// An import holds the clusterset IPs of a ClusterSetIP Service in one
// cluster: the cluster IPs of the Service kubesky derives there, so the
// address a pod is answered routes in its own cluster. Each skydns serves
// its own cluster's imports.
//
// Each cluster writes only below its own cluster ID, so an etcd role can
// grant a cluster write access to its own exports and imports and nothing
// else (ClusterWriteRanges; every reader needs ReadRange). Every export and import key of a cluster is attached to the one
// lease that holds its clusters/ key: a cluster that stops renewing it
// loses all of them together when the lease expires. A cluster ID is one lower-case DNS label,
// because it becomes a label of <hostname>.<cluster-id>.<svc>.<ns>.svc.clusterset.local.
//
// An export value:
//
//	{"created":"2026-11-29T02:00:00Z","type":"Headless",
//	 "ports":[{"name":"http","protocol":"TCP","port":80}],
//	 "endpoints":[{"hostname":"web-0","addresses":["10.1.0.7"]}]}
//
// created is the ServiceExport's creationTimestamp (the oldest export wins a
// conflict); endpoints are the ready ones only, each named by its hostname
// or, without one, its dashed address (10-1-0-7).
//
// # The merged view
//
// Store takes the updates of the prefix and Merge builds an immutable View,
// read by skydns (answers) and kube2sky (ServiceImports). It follows
// KEP-1645's conflict rule: the oldest export (creationTimestamp, then
// cluster ID) decides the type and the Service's properties; ports are the
// union, merged by name first, then by protocol and number; endpoints are
// the union of every exporting cluster's ready endpoints.
package clusterset
