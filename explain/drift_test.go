package explain

import (
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

func entry(key, host string) records.Entry {
	return records.Entry{Key: key, Record: contract.Record{Host: host, TTL: 30, Owner: "k"}}
}

func kv(key, value string) KV { return KV{Key: key, Value: value, Owner: "k"} }

func TestCompare(t *testing.T) {
	want := []records.Entry{entry("/a", "10.0.0.1"), entry("/b", "10.0.0.2"), entry("/c", "10.0.0.3")}
	t.Run("the same records are in sync, whatever the field order of the JSON", func(t *testing.T) {
		d := Compare(want, []KV{
			kv("/a", `{"host":"10.0.0.1","ttl":30,"owner":"k"}`),
			kv("/b", `{"owner":"k","ttl":30,"host":"10.0.0.2"}`),
			kv("/c", `{"host":"10.0.0.3","ttl":30,"owner":"k"}`),
		})
		if !d.None() || d.Same != 3 {
			t.Fatalf("drift %+v, want none and 3 the same", d)
		}
	})
	t.Run("a missing, an extra and a changed key are each named", func(t *testing.T) {
		d := Compare(want, []KV{
			kv("/a", `{"host":"10.0.0.1","ttl":30,"owner":"k"}`),
			kv("/b", `{"host":"10.0.0.9","ttl":30,"owner":"k"}`),
			kv("/z", `{"host":"10.0.0.26","ttl":30,"owner":"k"}`),
		})
		if d.None() || d.Same != 1 {
			t.Fatalf("drift %+v, want 1 the same and drift", d)
		}
		if len(d.Missing) != 1 || d.Missing[0].Key != "/c" {
			t.Errorf("missing %v, want /c", d.Missing)
		}
		if len(d.Extra) != 1 || d.Extra[0].Key != "/z" {
			t.Errorf("extra %v, want /z", d.Extra)
		}
		if len(d.Changed) != 1 || d.Changed[0].Key != "/b" || !strings.Contains(d.Changed[0].Have, "10.0.0.9") ||
			d.Changed[0].Want != `{"host":"10.0.0.2","ttl":30,"owner":"k"}` {
			t.Errorf("changed %+v, want /b from 10.0.0.9 to 10.0.0.2", d.Changed)
		}
	})
	t.Run("a value that is no record differs", func(t *testing.T) {
		d := Compare(want[:1], []KV{kv("/a", `not json`)})
		if len(d.Changed) != 1 {
			t.Fatalf("drift %+v, want /a changed", d)
		}
	})
	t.Run("a TTL other than the builder's differs", func(t *testing.T) {
		d := Compare(want[:1], []KV{kv("/a", `{"host":"10.0.0.1","ttl":60,"owner":"k"}`)})
		if len(d.Changed) != 1 {
			t.Fatalf("drift %+v, want /a changed", d)
		}
	})
	t.Run("a Service gone leaves every key extra", func(t *testing.T) {
		d := Compare(nil, []KV{kv("/a", `{"host":"10.0.0.1"}`)})
		if len(d.Extra) != 1 || d.Same != 0 {
			t.Fatalf("drift %+v, want /a extra", d)
		}
	})
}

func TestObjectsOf(t *testing.T) {
	z := records.NewZone("cluster.local", "/skydns", 30, "k")
	q, err := ParseQuery("/skydns", []string{"default.svc.cluster.local"})
	if err != nil {
		t.Fatal(err)
	}
	keys := []KV{
		kv("/skydns/local/cluster/svc/default/web/1a2b3c4d", `{"host":"10.96.0.10"}`),
		kv("/skydns/local/cluster/svc/default/web/_tcp/_http/5e6f7a8b", `{"host":"web.default.svc.cluster.local.","port":80}`),
		kv("/skydns/local/cluster/svc/default/db/db-0", `{"host":"10.244.1.7"}`),
		{Key: "/skydns/local/cluster/svc/default/hand/x1", Value: `{"host":"10.0.0.1"}`},
		{Key: "/skydns/local/cluster/svc/default/other/x1", Value: `{"host":"10.0.0.2"}`, Owner: "someone-else"},
	}
	refs, byRef := objectsOf(z, q, keys)
	if len(refs) != 2 || refs[0].String() != "Service default/web" || refs[1].String() != "Service default/db" {
		t.Fatalf("objects %v, want default/web and default/db: keys without this owner stand for none", refs)
	}
	if len(byRef[refs[0]]) != 2 || len(byRef[refs[1]]) != 1 {
		t.Fatalf("keys by object %v, want 2 and 1", byRef)
	}
	t.Run("a PTR key stands for the Service its target names", func(t *testing.T) {
		ptr := kv("/skydns/arpa/in-addr/10/244/1/7", `{"host":"db-0.db.default.svc.cluster.local."}`)
		if ref, ok := objectOfKey(z, ptr); !ok || ref.String() != "Service default/db" {
			t.Fatalf("object %v %v, want Service default/db", ref, ok)
		}
	})
	t.Run("the dns-version key stands for the zone", func(t *testing.T) {
		if ref, ok := objectOfKey(z, kv(z.DNSVersionKey(), `{"text":"1.1.0"}`)); !ok || ref.Kind != KindZone {
			t.Fatalf("object %v %v, want the zone", ref, ok)
		}
	})
	t.Run("a Service's name names it although etcd holds none of its keys", func(t *testing.T) {
		q, _ := ParseQuery("/skydns", []string{"_http._tcp.nope.default.svc.cluster.local", "SRV"})
		refs, _ := objectsOf(z, q, nil)
		if len(refs) != 1 || refs[0].String() != "Service default/nope" {
			t.Fatalf("objects %v, want Service default/nope", refs)
		}
	})
}
