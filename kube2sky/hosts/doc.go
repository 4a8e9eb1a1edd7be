// Package hosts turns hosts-file text (hosts(5): an address, then one or
// more names, "#" starting a comment) into SkyDNS records. It is pure: the
// kube2sky controller feeds it the data of a ConfigMap and writes what it
// returns.
//
// With Config{Prefix: "/skydns", Domain: "hosts.cluster.local.",
// ExtraDomain: "example.corp.", TTL: 30, Owner: "kube2sky.cluster.local"}
// the line
//
//	10.0.0.5  db1.example.corp  db1   # the primary
//
// names db1 twice (a name ending in the extra domain is taken relative to
// it) and yields
//
//	/skydns/local/cluster/hosts/db1/<hash(10.0.0.5)>  {"host":"10.0.0.5","ttl":30,"owner":"..."}
//	/skydns/corp/example/db1/<hash(10.0.0.5)>         {"host":"10.0.0.5",...}
//	/skydns/arpa/in-addr/10/0/0/5                     {"host":"db1.example.corp.",...}
//
// A name may have several addresses (several lines); the PTR of an address
// names the first name of its first line, in the extra domain when there is
// one. A line that cannot be served whole is skipped and reported as a
// Problem with its data key and line number; the other lines still apply.
package hosts
