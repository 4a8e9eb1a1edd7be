// Package explain answers "why does this name answer what it does?" for
// kubesky's cluster DNS, from the outside, through the etcd contract.
//
// For one DNS name and type it gathers, into a Report:
//
//   - the etcd keys at and below the name's key (the exact PTR key for a
//     reverse name), read in one transaction, with their values, create
//     and mod revisions and the "owner" kube2sky stamps on what it writes;
//   - the Kubernetes object each owned key stands for (a Service: from the
//     key's svc/<ns>/<name>/ labels, or for a PTR key from its target),
//     fetched with its resourceVersion and its EndpointSlices;
//   - a drift check: the records kube2sky's pure builder (kube2sky/records)
//     would write for that object now, compared key by key and value by
//     value with what etcd holds within the name's keys;
//   - each skydns replica's answer, and the etcd revision it has applied
//     (its skydns_snapshot_revision gauge) against etcd's current one.
//
// Gathering (Explain) needs etcd, optionally a Kubernetes client and the
// replicas' addresses; everything it returns is plain data, compared
// (Compare) and printed (Report.Write) by pure functions.
//
// A worked example: for web.default.svc.cluster.local. A the keys read are
// /skydns/local/cluster/svc/default/web and everything under
// /skydns/local/cluster/svc/default/web/; their owner kube2sky.cluster.local
// and the labels default/web name the Service default/web; Build of that
// Service and its EndpointSlices gives the records it should have, of which
// those under the name's key are compared.
package explain
