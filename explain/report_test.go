package explain

import (
	"errors"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// sampleReport has a key in sync, one added by hand, a Service with drift,
// a stale Service, and three replicas: current, behind, unreachable.
func sampleReport() Report {
	web := Query{Name: "web.default.svc.cluster.local.", Type: dns.TypeA, Key: "/skydns/local/cluster/svc/default/web"}
	owned := KV{Key: web.Key + "/1a2b3c4d", Value: `{"host":"10.96.0.10","ttl":30,"owner":"k"}`, CreateRevision: 7, ModRevision: 9, Owner: "k"}
	hand := KV{Key: web.Key + "/x1", Value: `{"host":"10.0.0.1"}`, CreateRevision: 11, ModRevision: 11}
	return Report{
		Query: web, Owner: "k",
		Keys: Keys{Revision: 12, KVs: []KV{owned, hand}},
		Objects: []ObjectCheck{
			{Ref: ObjectRef{Kind: KindService, Namespace: "default", Name: "web"}, Checked: true, Found: true,
				ResourceVersion: "501", Slices: []string{"web-abcde@502"}, Keys: []KV{owned},
				Drift: Drift{Same: 1, Missing: []records.Entry{entry(web.Key+"/_tcp/_http/99999999", "web.default.svc.cluster.local.")}}},
			{Ref: ObjectRef{Kind: KindService, Namespace: "default", Name: "old"}, Checked: true, Keys: []KV{owned},
				Drift: Drift{Extra: []KV{owned}}},
		},
		Replicas: []ReplicaState{
			{Replica: Replica{DNS: "127.0.0.1:1053"}, Rcode: "NOERROR", Answer: []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.10"}, Applied: 12},
			{Replica: Replica{DNS: "127.0.0.1:2053"}, Rcode: "NOERROR", Answer: []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.10"}, Applied: 10},
			{Replica: Replica{DNS: "127.0.0.1:3053"}, AskErr: errors.New("i/o timeout"), RevErr: errors.New("no HTTP address given")},
		},
	}
}

const sampleText = `web.default.svc.cluster.local. A

etcd (revision 12): 2 keys at and below /skydns/local/cluster/svc/default/web
  /skydns/local/cluster/svc/default/web/1a2b3c4d
      {"host":"10.96.0.10","ttl":30,"owner":"k"}
      created 7, modified 9, owner k
  /skydns/local/cluster/svc/default/web/x1
      {"host":"10.0.0.1"}
      created 11, modified 11, no owner: added by hand, kube2sky leaves it alone

objects
  Service default/web, resourceVersion 501, EndpointSlices web-abcde@502
      DRIFT: 1 same, 1 missing, 0 extra, 0 changed
      missing /skydns/local/cluster/svc/default/web/_tcp/_http/99999999 {"host":"web.default.svc.cluster.local.","ttl":30,"owner":"k"}
  Service default/old: not in the API; stale keys: 1
      DRIFT: 0 same, 0 missing, 1 extra, 0 changed
      extra   /skydns/local/cluster/svc/default/web/1a2b3c4d {"host":"10.96.0.10","ttl":30,"owner":"k"}

replicas (etcd at revision 12; the keys above last changed at 11)
  127.0.0.1:1053  NOERROR, 1 record; applied revision 12 (current)
      web.default.svc.cluster.local. 30 IN A 10.96.0.10
  127.0.0.1:2053  NOERROR, 1 record; applied revision 10 (2 behind etcd, OLDER than the keys above)
      web.default.svc.cluster.local. 30 IN A 10.96.0.10
  127.0.0.1:3053  no answer: i/o timeout; applied revision unknown: no HTTP address given
`

func TestReportWrite(t *testing.T) {
	var b strings.Builder
	if err := sampleReport().Write(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != sampleText {
		t.Fatalf("report:\n%s\nwant:\n%s", b.String(), sampleText)
	}
}

func TestReportWriteSaysWhatIsMissing(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Report)
		want string
	}{
		{"no key: the name does not exist", func(r *Report) { r.Keys.KVs = nil; r.Objects = nil },
			"etcd (revision 12): no key at and below /skydns/local/cluster/svc/default/web, so the name does not exist\n\nreplicas (etcd at revision 12)\n"},
		{"a reverse name reads only its key", func(r *Report) { r.Query.Reverse = true; r.Keys.KVs = nil },
			"no key at /skydns/local/cluster/svc/default/web,"},
		{"objects not fetched without a kubeconfig", func(r *Report) { r.Objects[0].Checked = false },
			"Service default/web: not fetched (no --kubeconfig), 1 key\n"},
		{"a failed fetch is said", func(r *Report) { r.Objects[0].Err = errors.New("forbidden") },
			"Service default/web: not checked: forbidden\n"},
		{"a Service in sync", func(r *Report) { r.Objects[0].Drift = Drift{Same: 3} },
			"in sync: etcd holds the 3 records the builder gives\n"},
		{"another kube2sky's key is not checked", func(r *Report) { r.Keys.KVs[1].Owner = "kube2sky.other" },
			"owner kube2sky.other (not this kube2sky's k: not checked)\n"},
		{"a Service that is nowhere", func(r *Report) { r.Objects[1].Keys = nil },
			"Service default/old: not in the API, and kube2sky owns no key for it\n\nreplicas"},
		{"owned keys of no Service", func(r *Report) { r.Objects = nil; r.Unchecked = 2 },
			"objects\n  2 keys of kube2sky's stand for no Service (pod addresses, hosts): not checked\n"},
		{"no replicas", func(r *Report) { r.Replicas = nil }, "replicas: none given"},
		{"a replica behind etcd that has the keys", func(r *Report) { r.Replicas[1].Applied = 11 },
			"applied revision 11 (1 behind etcd, but has every key above)"},
		{"more keys than shown", func(r *Report) { r.Keys.More = true }, "more keys below the name, not shown (--max-keys)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := sampleReport()
			c.edit(&r)
			var b strings.Builder
			r.Write(&b)
			if !strings.Contains(b.String(), c.want) {
				t.Fatalf("report:\n%s\nwant it to contain %q", b.String(), c.want)
			}
		})
	}
}
