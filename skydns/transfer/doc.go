// Package transfer serves the zones to secondary name servers: AXFR and
// IXFR over TCP to an allow-list of client networks, and NOTIFY to a list
// of secondaries when the records change.
//
// A zone's contents are what the resolver answers, name by name (see
// Records): for every name at or above a record, up to the apex, the
// answers to A, AAAA, CNAME, TXT, SRV, MX and PTR questions, plus the
// apex's SOA and NS. With the records
//
//	/skydns/local/cluster/svc/default/web/a1           {"host":"10.96.0.1"}
//	/skydns/local/cluster/svc/default/web/_tcp/_http/p {"host":"web.default.svc.cluster.local.","port":80}
//
// the zone cluster.local. holds, besides its SOA and NS,
//
//	a1.web.default.svc.cluster.local.         A    10.96.0.1
//	a1.web.default.svc.cluster.local.         SRV  10 100 0 a1.web.default.svc.cluster.local.
//	web.default.svc.cluster.local.            A    10.96.0.1
//	web.default.svc.cluster.local.            SRV  10 50 0 a1.web.default.svc.cluster.local.
//	web.default.svc.cluster.local.            SRV  10 50 80 web.default.svc.cluster.local.
//	_http._tcp.web.default.svc.cluster.local. SRV  10 100 80 web.default.svc.cluster.local.
//	...                                       and the same at default.svc. and svc.
//
// (the whole list is the first case of TestRecordsAreWhatTheResolverAnswersAtEveryName),
// so a secondary answers every name as the primary does. A name holds
// either data or one CNAME: a CNAME gives way to SRV records with a port
// or MX records (see appendName). Names holding a wildcard label ("*",
// "any") and the pod names --pod-records=insecure synthesizes are not in
// it.
//
// The serial is the snapshot's etcd revision modulo 2^32 (RFC 1982 serial
// arithmetic keeps it growing across the wrap, as long as a secondary
// does not miss 2^31 revisions). IXFR keeps no history: a client whose
// serial is current gets the SOA alone, any other the whole zone in AXFR
// form (RFC 1995, section 4).
package transfer
