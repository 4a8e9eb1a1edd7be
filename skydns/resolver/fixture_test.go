package resolver_test

import (
	"maps"
	"net/netip"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// longText is 300 bytes: a TXT record splits it into 255 + 45.
var longText = strings.Repeat("x", 300)

// clusterRecords is the etcd content the resolver tables answer from: what
// kube2sky writes for a few services, plus hand-written records for the
// corner cases.
var clusterRecords = map[string]string{
	// The zone itself.
	"/skydns/local/cluster/dns-version": `{"text":"1.1.0"}`,
	"/skydns/local/cluster/dns/ns/ns1":  `{"host":"10.96.0.10"}`,
	"/skydns/local/cluster/dns/ns/ns2":  `{"host":"fd00::10","ttl":60}`,
	"/skydns/local/cluster/dns/ns/ext":  `{"host":"ns.example.net."}`,
	"/skydns/local/cluster/dns/apex/a1": `{"host":"10.96.0.53"}`,
	"/skydns/local/cluster/dns/apex/mx": `{"host":"mx.example.net.","mail":true}`,

	// A dual-stack ClusterIP service with one named port, and its PTRs.
	"/skydns/local/cluster/svc/default/web/a1":            `{"host":"10.96.0.1","owner":"kube2sky"}`,
	"/skydns/local/cluster/svc/default/web/a6":            `{"host":"fd00:10:96::1"}`,
	"/skydns/local/cluster/svc/default/web/_tcp/_http/p1": `{"host":"web.default.svc.cluster.local.","port":80}`,
	"/skydns/arpa/in-addr/10/96/0/1":                      `{"host":"web.default.svc.cluster.local."}`,
	// The same service name in another namespace.
	"/skydns/local/cluster/svc/other/web/a1": `{"host":"10.96.1.1"}`,

	// A headless service with two endpoints and one named port.
	"/skydns/local/cluster/svc/default/db/db-0":          `{"host":"10.244.1.5"}`,
	"/skydns/local/cluster/svc/default/db/db-1":          `{"host":"10.244.2.6"}`,
	"/skydns/local/cluster/svc/default/db/_tcp/_pg/db-0": `{"host":"db-0.db.default.svc.cluster.local.","port":5432}`,
	"/skydns/local/cluster/svc/default/db/_tcp/_pg/db-1": `{"host":"db-1.db.default.svc.cluster.local.","port":5432}`,

	// CNAMEs: out of the zone, into it, chained, looping, to themselves,
	// dangling, too long.
	"/skydns/local/cluster/svc/default/ext/x1":      `{"host":"example.com."}`,
	"/skydns/local/cluster/svc/default/alias/x1":    `{"host":"web.default.svc.cluster.local."}`,
	"/skydns/local/cluster/svc/default/alias2/x1":   `{"host":"alias.default.svc.cluster.local"}`,
	"/skydns/local/cluster/svc/default/extalias/x1": `{"host":"ext.default.svc.cluster.local."}`,
	"/skydns/local/cluster/svc/default/dangling/x1": `{"host":"nothing.cluster.local."}`,
	"/skydns/local/cluster/loop/a/x":                `{"host":"b.loop.cluster.local."}`,
	"/skydns/local/cluster/loop/b/x":                `{"host":"a.loop.cluster.local."}`,
	"/skydns/local/cluster/self/x":                  `{"host":"self.cluster.local."}`,
	"/skydns/local/cluster/below/x":                 `{"host":"x.below.cluster.local."}`,
	"/skydns/local/cluster/chain/c0":                `{"host":"c1.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c1":                `{"host":"c2.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c2":                `{"host":"c3.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c3":                `{"host":"c4.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c4":                `{"host":"c5.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c5":                `{"host":"c6.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c6":                `{"host":"c7.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c7":                `{"host":"c8.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c8":                `{"host":"c9.chain.cluster.local."}`,
	"/skydns/local/cluster/chain/c9/a":              `{"host":"10.0.0.99"}`,
	"/skydns/local/cluster/txtalias/x":              `{"host":"dns-version.cluster.local."}`,

	// TTLs, duplicates, long text.
	"/skydns/local/cluster/ttl/a":               `{"host":"10.0.0.2","ttl":5}`,
	"/skydns/local/cluster/dup/a":               `{"host":"10.0.0.1"}`,
	"/skydns/local/cluster/dup/b":               `{"host":"10.0.0.1"}`,
	"/skydns/local/cluster/dup/c":               `{"text":"same"}`,
	"/skydns/local/cluster/dup/d":               `{"text":"same"}`,
	"/skydns/local/cluster/long/t":              `{"text":"` + longText + `"}`,
	"/skydns/local/cluster/mixed/ip-and-text":   `{"host":"10.0.0.3","text":"ignored"}`,
	"/skydns/local/cluster/mixed/name-and-text": `{"host":"target.example.net.","text":"kept"}`,

	// Mail.
	"/skydns/local/cluster/mail/mx1": `{"host":"10.0.0.25","mail":true,"priority":20}`,
	"/skydns/local/cluster/mail/mx2": `{"host":"mx.example.net","mail":true}`,
	"/skydns/local/cluster/mail/web": `{"host":"10.0.0.80"}`,

	// SRV weights: priority 10 weights 0 (=100), 50, 150; priority 20 one
	// record; priority 30 a share that rounds to 0.
	"/skydns/local/cluster/weights/a": `{"host":"a.example.net","port":1}`,
	"/skydns/local/cluster/weights/b": `{"host":"b.example.net","port":2,"weight":50}`,
	"/skydns/local/cluster/weights/c": `{"host":"c.example.net","port":3,"weight":150}`,
	"/skydns/local/cluster/weights/d": `{"host":"d.example.net","port":4,"priority":20}`,
	"/skydns/local/cluster/weights/e": `{"host":"e.example.net","port":5,"priority":30,"weight":1}`,
	"/skydns/local/cluster/weights/f": `{"host":"f.example.net","port":6,"priority":30,"weight":65535}`,
	"/skydns/local/cluster/weights/t": `{"text":"no SRV from text"}`,

	// targetstrip.
	"/skydns/local/cluster/strip/x1":   `{"host":"10.0.0.7","port":8080,"targetstrip":1}`,
	"/skydns/local/cluster/strip/x2":   `{"host":"10.0.0.8","port":8080,"targetstrip":1}`,
	"/skydns/local/cluster/strip/name": `{"host":"a.b.example.net.","port":9,"targetstrip":1}`,
	"/skydns/local/cluster/strip/all":  `{"host":"10.0.0.9","port":7,"targetstrip":9}`,

	// Groups (the cases of CoreDNS's group tests, and a disagreement).
	"/skydns/local/cluster/groups/dom/a":      `{"host":"127.0.0.1","group":"g1"}`,
	"/skydns/local/cluster/groups/dom/sub/b":  `{"host":"127.0.0.2","group":"g1"}`,
	"/skydns/local/cluster/groups/dom2/a":     `{"host":"127.0.0.1","group":"g1"}`,
	"/skydns/local/cluster/groups/dom2/sub/b": `{"host":"127.0.0.2"}`,
	"/skydns/local/cluster/groups/dom1/a":     `{"host":"127.0.0.1","group":"g1"}`,
	"/skydns/local/cluster/groups/dom1/sub/b": `{"host":"127.0.0.2","group":"g2"}`,
	"/skydns/local/cluster/groups/dom3/a":     `{"host":"127.0.0.1","group":"g1"}`,
	"/skydns/local/cluster/groups/dom3/b":     `{"host":"127.0.0.2","group":"g2"}`,
	"/skydns/local/cluster/groups/dom3/sub/c": `{"host":"127.0.0.3","group":"g3"}`,
}

func clusterSnapshot(t testing.TB) *snapshot.Snapshot {
	t.Helper()
	records := maps.Clone(clusterRecords)
	records[contract.ReverseKey("/skydns", netip.MustParseAddr("fd00:10:96::1"))] = `{"host":"web.default.svc.cluster.local."}`
	return snapshottest.Build(t, "/skydns", records)
}
