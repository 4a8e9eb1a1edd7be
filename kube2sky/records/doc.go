// Package records is the DNS specification half of kube2sky: a pure function
// from one Service and its EndpointSlices to the SkyDNS records that
// implement the Kubernetes DNS-Based Service Discovery specification 1.1.0,
// and the conversions from API objects into the small structs it reads.
//
// # What Build writes
//
// For zone cluster.local under prefix /skydns, owner "kube2sky.cluster.local"
// and TTL 30 (every value also carries "ttl":30 and "owner"):
//
// A ClusterIP, NodePort or LoadBalancer Service web in default with cluster
// IPs 10.96.0.10 and fd00::a and a port http/TCP/80:
//
//	/skydns/local/cluster/svc/default/web/<hash(10.96.0.10)>         {"host":"10.96.0.10"}
//	/skydns/local/cluster/svc/default/web/<hash(fd00::a)>            {"host":"fd00::a"}
//	/skydns/local/cluster/svc/default/web/_tcp/_http/<hash>          {"host":"web.default.svc.cluster.local.","port":80}
//	/skydns/arpa/in-addr/10/96/0/10                                  {"host":"web.default.svc.cluster.local."}
//	/skydns/arpa/ip6/0/0/0/0/.../d/f/a                               {"host":"web.default.svc.cluster.local."}
//
// A headless Service db with a ready endpoint 10.244.1.7 (hostname db-0) and
// one without a hostname, 10.244.2.9, on port pg/TCP/5432:
//
//	/skydns/local/cluster/svc/default/db/db-0                 {"host":"10.244.1.7"}
//	/skydns/local/cluster/svc/default/db/10-244-2-9           {"host":"10.244.2.9"}
//	/skydns/local/cluster/svc/default/db/_tcp/_pg/db-0        {"host":"db-0.db.default.svc.cluster.local.","port":5432}
//	/skydns/local/cluster/svc/default/db/_tcp/_pg/10-244-2-9  {"host":"10-244-2-9.db.default.svc.cluster.local.","port":5432}
//	/skydns/arpa/in-addr/10/244/1/7                           {"host":"db-0.db.default.svc.cluster.local."}
//	/skydns/arpa/in-addr/10/244/2/9                           {"host":"10-244-2-9.db.default.svc.cluster.local."}
//
// An ExternalName Service to db.example.com:
//
//	/skydns/local/cluster/svc/default/ext/<hash(db.example.com.)>  {"host":"db.example.com."}
//
// The <hash> label is the first 8 hex digits of the FNV-1a (32 bit) hash of
// the record's host and port ("10.96.0.10", "web.default.svc.cluster.local.:80"),
// so a record keeps its key as long as its value is the same.
//
// When several different values would share one key (a dual-stack pod with
// hostname db-0 has an IPv4 and an IPv6 address), each goes one level down,
// to <key>/<hash of its value>. A query for the name still returns all of
// them. A reverse (PTR) key is exact, so there the smallest target wins.
//
// # Bad input
//
// Build never fails: what cannot be turned into a record (a name that is not
// a DNS label, an unparseable IP, an unknown protocol) is left out and
// described by a Problem, and the valid rest of the Service is still
// returned. Addresses no client could use (unspecified, loopback,
// link-local, multicast, broadcast, IPv4-mapped IPv6) are no A or AAAA
// records, and a name longer than 253 characters is no record at all: every
// entry Build returns passes Zone.CheckEntry.
package records
