// Package relay is the read-only fan-out tier between etcd and the
// skydns on every node: a gRPC server made of etcd's own grpcproxy
// package that offers the KV service for reads only and the Watch service,
// and no other etcd service. Watches of one range share one upstream
// watch; BatchingWatch sends each reader the events of a window (the
// relay's --watch-batch) as one response, marshalled once for all readers,
// and with a window of 0 grpcproxy's Watch proxy sends each revision alone.
//
// Three locks keep its readers read-only. Put, DeleteRange, Compact and a
// Txn holding a write are refused with PermissionDenied before they go
// upstream (ReadOnlyKV). The relay reaches etcd as a user whose role may
// only read the records' prefix, and the clusterset prefix when the
// clusterset records share that etcd (its client certificate's common
// name, under etcd's --client-cert-auth), so etcd refuses whatever a bug
// in the filter let through; the relay itself limits no key range. And a reader must present a client certificate
// signed by the trusted CA with a common name on the allow-list
// (AllowCommonNames); Lease, Cluster, Maintenance and Auth calls are
// Unimplemented, as they are not registered.
package relay
