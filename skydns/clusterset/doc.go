// Package clusterset answers the Multi-Cluster Services zone clusterset.local
// from the exports every cluster publishes in the shared etcd
// (contract/clusterset), as the MCS DNS specification 1.0.0 says. It is pure:
// Store takes the updates of the prefix (skydns feeds it from a ListWatcher),
// Merge builds an immutable View, and View.Answer answers one question.
//
// The merged view follows KEP-1645's conflict rule: the oldest export
// (creationTimestamp, then cluster ID) decides the type; ports are the
// union, merged by name first, then by protocol and number; endpoints are
// the union of every exporting cluster's ready endpoints.
package clusterset
