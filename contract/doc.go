// Package contract is the record contract between kube2sky and skydns, with
// no I/O: the SkyDNS record JSON stored as etcd values, the mapping between
// DNS names and etcd keys, and the changes a reader of the prefix receives.
// etcdstore does the etcd I/O with these types; records, snapshot and
// resolver use them without linking an etcd client.
//
// # Key layout
//
// A DNS name is stored under the prefix (default "/skydns") with its labels
// reversed and lower-cased:
//
//	web.default.svc.cluster.local.          -> /skydns/local/cluster/svc/default/web
//	_http._tcp.web.default.svc.cluster.local. -> /skydns/local/cluster/svc/default/web/_tcp/_http
//	1.0.96.10.in-addr.arpa.                 -> /skydns/arpa/in-addr/10/96/0/1
//
// Several records for one name live one level below its key, under a label of
// the writer's choosing (kube2sky uses a short hash or the endpoint hostname):
//
//	/skydns/local/cluster/svc/default/web/3a1f2c = {"host":"10.96.0.10"}
//
// A query for a name returns every record at or below its key. The labels "*"
// and "any" in a query match exactly one label.
//
// # Record values
//
// Values are the JSON of SkyDNS's msg.Service: host, port, priority, weight,
// text, mail, ttl, targetstrip and group, with zero fields omitted. kube2sky
// adds an "owner" field to the values it writes; every reader ignores it.
package contract
