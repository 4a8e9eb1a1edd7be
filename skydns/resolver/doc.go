// Package resolver answers DNS questions from a snapshot of SkyDNS records,
// with the semantics of SkyDNS and CoreDNS's etcd plugin. It is pure:
// Resolve takes a snapshot and a question and returns a message, and never
// does I/O.
//
// A question is answered from every record at or below its name (PTR: the
// exact name), filtered by SkyDNS groups. With zone cluster.local and the
// records
//
//	/skydns/local/cluster/svc/default/web/a1          {"host":"10.96.0.1"}
//	/skydns/local/cluster/svc/default/web/_tcp/_http/p {"host":"web.default.svc.cluster.local.","port":80}
//	/skydns/local/cluster/svc/default/ext/x            {"host":"example.com."}
//
// the answers are
//
//	web.default.svc.cluster.local. A                 10.96.0.1 (the port record points back at itself: skipped)
//	_http._tcp.web.default.svc.cluster.local. SRV    10 100 80 web.default.svc.cluster.local. (+ A glue)
//	a1.web.default.svc.cluster.local. SRV            10 100 0 a1.web.default.svc.cluster.local. (+ A glue)
//	ext.default.svc.cluster.local. A                 CNAME example.com. (ExternalTarget reports example.com.)
//	nope.default.svc.cluster.local. A                NXDOMAIN, SOA in the authority section
//	cluster.local. SOA                               ns.dns.cluster.local. hostmaster.cluster.local. <revision> ...
//
// docs/resolver.md describes every rule and the differences from CoreDNS.
package resolver
