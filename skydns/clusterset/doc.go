// Package clusterset answers the Multi-Cluster Services zone clusterset.local
// from the merged view of the exports every cluster publishes in the shared
// etcd (contract/clusterset's Store and View, which skydns feeds from a
// ListWatcher), as the MCS DNS specification 1.0.0 says. It is pure: Answer
// answers one question from one View.
package clusterset
