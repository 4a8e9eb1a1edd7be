package hosts

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

var (
	zoneOnly  = Config{Prefix: "/skydns", Domain: "hosts.cluster.local.", TTL: 30, Owner: "o"}
	withExtra = Config{Prefix: "/skydns", Domain: "hosts.cluster.local.", ExtraDomain: "example.corp.", TTL: 30, Owner: "o"}
)

// kv writes an entry as "key host".
func kv(es []records.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		if e.Record.TTL != 30 || e.Record.Owner != "o" {
			out[i] = "bad ttl or owner: " + string(e.Record.Encode())
			continue
		}
		out[i] = e.Key + " " + e.Record.Host
	}
	return out
}

func h(ip string) string { return records.HashLabel(ip, 0) }

func TestRecords(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		data     map[string]string
		want     []string
		problems []string
	}{
		{
			name: "names go under hosts.<zone>, with a PTR to the first name",
			cfg:  zoneOnly,
			data: map[string]string{"hosts": "10.0.0.5 db1 db1-alias\nfd00::5 db6\n"},
			want: []string{
				"/skydns/arpa/in-addr/10/0/0/5 db1.hosts.cluster.local.",
				contract.ReverseKey("/skydns", mustAddr("fd00::5")) + " db6.hosts.cluster.local.",
				"/skydns/local/cluster/hosts/db1-alias/" + h("10.0.0.5") + " 10.0.0.5",
				"/skydns/local/cluster/hosts/db1/" + h("10.0.0.5") + " 10.0.0.5",
				"/skydns/local/cluster/hosts/db6/" + h("fd00::5") + " fd00::5",
			},
		},
		{
			name: "with an extra domain every name is written twice and the PTR names the extra one",
			cfg:  withExtra,
			data: map[string]string{"hosts": "10.0.0.5 db1.example.corp db1 # both are db1\n10.0.0.6 rack2.db2\n"},
			want: []string{
				"/skydns/arpa/in-addr/10/0/0/5 db1.example.corp.",
				"/skydns/arpa/in-addr/10/0/0/6 rack2.db2.example.corp.",
				"/skydns/corp/example/db1/" + h("10.0.0.5") + " 10.0.0.5",
				"/skydns/corp/example/db2/rack2/" + h("10.0.0.6") + " 10.0.0.6",
				"/skydns/local/cluster/hosts/db1/" + h("10.0.0.5") + " 10.0.0.5",
				"/skydns/local/cluster/hosts/db2/rack2/" + h("10.0.0.6") + " 10.0.0.6",
			},
		},
		{
			name: "a name on several lines has every address; the PTR of an address is its first line's",
			cfg:  zoneOnly,
			data: map[string]string{"a": "10.0.0.1 web\n10.0.0.2 web\n", "b": "10.0.0.1 other\n"},
			want: []string{
				"/skydns/arpa/in-addr/10/0/0/1 web.hosts.cluster.local.",
				"/skydns/arpa/in-addr/10/0/0/2 web.hosts.cluster.local.",
				"/skydns/local/cluster/hosts/other/" + h("10.0.0.1") + " 10.0.0.1",
				"/skydns/local/cluster/hosts/web/" + h("10.0.0.1") + " 10.0.0.1",
				"/skydns/local/cluster/hosts/web/" + h("10.0.0.2") + " 10.0.0.2",
			},
		},
		{
			name: "a fully qualified name in hosts.<zone> is relative to it",
			cfg:  zoneOnly,
			data: map[string]string{"hosts": "10.0.0.1 db1.hosts.cluster.local.\n"},
			want: []string{
				"/skydns/arpa/in-addr/10/0/0/1 db1.hosts.cluster.local.",
				"/skydns/local/cluster/hosts/db1/" + h("10.0.0.1") + " 10.0.0.1",
			},
		},
		{
			name: "bad lines of every key are reported and the rest still applies",
			cfg:  withExtra,
			data: map[string]string{
				"a": "10.0.0.1 good\nnot-an-ip bad\n",
				"b": "10.0.0.2 example.corp\n10.0.0.3 " + strings.Repeat("x", 60) + "." + strings.Repeat("y", 60) + "." + strings.Repeat("z", 60) + "." + strings.Repeat("w", 60) + "\n10.0.0.4 hosts.cluster.local\n",
			},
			want: []string{
				"/skydns/arpa/in-addr/10/0/0/1 good.example.corp.",
				"/skydns/corp/example/good/" + h("10.0.0.1") + " 10.0.0.1",
				"/skydns/local/cluster/hosts/good/" + h("10.0.0.1") + " 10.0.0.1",
				"/skydns/arpa/in-addr/10/0/0/2 example.corp.",
				"/skydns/corp/example/dns/apex/" + h("10.0.0.2") + " 10.0.0.2", // the apex's own records, not the zone's subtree
			},
			problems: []string{
				`data[a] line 2 "not-an-ip bad": "not-an-ip" is not an IP address`,
				`data[b] line 2`,
				`data[b] line 3 "10.0.0.4 hosts.cluster.local": names the domain itself, not a host in it`,
			},
		},
		{name: "no data, no records", cfg: zoneOnly, data: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, problems := Records(tt.cfg, tt.data)
			slices.Sort(tt.want)
			if got := kv(entries); !slices.Equal(got, tt.want) {
				t.Errorf("records:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.want, "\n     "))
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems %v, want %d", problems, len(tt.problems))
			}
			for i, p := range problems {
				if !strings.HasPrefix(p.Error(), tt.problems[i]) {
					t.Errorf("problem %d = %s, want it to start with %s", i, p.Error(), tt.problems[i])
				}
			}
		})
	}
}
