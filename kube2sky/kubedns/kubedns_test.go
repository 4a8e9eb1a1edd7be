package kubedns

import (
	"strings"
	"testing"
)

var cfg = Config{Prefix: "/skydns", Zone: "cluster.local.", Owner: "o"}

func TestAValidConfigMapBecomesStubAndUpstreamRecords(t *testing.T) {
	entries, errs := Records(cfg, map[string]string{
		KeyStubDomains:         `{"Acme.local": ["1.2.3.4", "10.0.0.53:5353"], "corp.": ["[fd00::53]:53"]}`,
		KeyUpstreamNameservers: `["8.8.8.8", "8.8.4.4:5353"]`,
		"federations":          `{"ignored": "here"}`,
	})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Key+" "+string(e.Record.Encode()))
	}
	want := []string{
		`/skydns/local/cluster/dns/config/upstream {"text":"8.8.8.8:53,8.8.4.4:5353","owner":"o"}`,
		`/skydns/local/cluster/dns/stub/corp/ns1 {"host":"fd00::53","port":53,"owner":"o"}`,
		`/skydns/local/cluster/dns/stub/local/acme/ns1 {"host":"1.2.3.4","port":53,"owner":"o"}`,
		`/skydns/local/cluster/dns/stub/local/acme/ns2 {"host":"10.0.0.53","port":5353,"owner":"o"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestEveryBadEntryIsNamed(t *testing.T) {
	tests := []struct {
		name string
		data map[string]string
		want string
	}{
		{"stubDomains not JSON", map[string]string{KeyStubDomains: `{acme`}, "stubDomains: not a JSON object"},
		{"a server that is a name", map[string]string{KeyStubDomains: `{"acme.local": ["ns.acme.local"]}`}, `stubDomains: "acme.local": server "ns.acme.local"`},
		{"a bad domain", map[string]string{KeyStubDomains: `{"a..b": ["1.2.3.4"]}`}, `stubDomains: "a..b": not a domain name`},
		{"a domain in the cluster", map[string]string{KeyStubDomains: `{"svc.cluster.local": ["1.2.3.4"]}`}, "inside the cluster domain"},
		{"a domain without servers", map[string]string{KeyStubDomains: `{"acme.local": []}`}, "no server"},
		{"upstreams not a list", map[string]string{KeyUpstreamNameservers: `"8.8.8.8"`}, "upstreamNameservers: not a JSON list"},
		{"an upstream with port 0", map[string]string{KeyUpstreamNameservers: `["8.8.8.8:0"]`}, `upstreamNameservers: server "8.8.8.8:0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := Records(cfg, tc.data)
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}

func TestAnEmptyConfigMapHasNoRecords(t *testing.T) {
	if entries, errs := Records(cfg, map[string]string{KeyUpstreamNameservers: `[]`}); len(entries) != 0 || len(errs) != 0 {
		t.Errorf("records %v, errors %v; want none", entries, errs)
	}
}
