// Package source is what the cluster says: the informers over Services,
// EndpointSlices, Pods and ConfigMaps (each object cut down to what DNS
// needs as it arrives), the pod address index, and the record groups
// built from their caches: a group per Service (records.Build), a group
// per pod address (--pod-records=verified), the hosts ConfigMap's and the
// kube-dns ConfigMap's records, and the zone's name servers. A Source says
// what each group should hold and where in etcd its keys lie, and calls
// back with a group's key whenever an event makes it stale; it never
// reads or writes etcd. Objects that yield no record are reported once:
// a log line, a metric and a Warning event on the object.
package source
