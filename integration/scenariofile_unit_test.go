package integration

import (
	"strings"
	"testing"
)

func TestScenarioFileLoads(t *testing.T) {
	scenarios, err := loadScenarios(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) < 10 {
		t.Fatalf("%d scenarios, want the whole suite", len(scenarios))
	}
}

func TestScenarioFileRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"an unknown field", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A}]}], colour: red}]", "unknown field"},
		{"a step with two actions", "scenarios: [{name: a, steps: [{apply: x, delete: {kind: Pod, name: p}}]}]", "exactly one"},
		{"a step with no action", "scenarios: [{name: a, steps: [{}]}]", "exactly one"},
		{"an unknown qtype", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: AXFRX}]}]}]", "not a DNS type"},
		{"an unknown rcode", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, rcode: NOPE}]}]}]", "not an rcode"},
		{"an unknown transport", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, transport: [quic]}]}]}]", "want udp or tcp"},
		{"an answer that is no record", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, answer: [nonsense here]}]}]}]", "not a zone-file record"},
		{"answer and rdata together", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, answer: [], rdata: []}]}]}]", "both given"},
		{"authority with dig", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, client: dig, authority: [SOA]}]}]}]", "miekg client only"},
		{"truncated with dig", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, client: dig, truncated: true}]}]}]", "miekg client only"},
		{"an unknown client", "scenarios: [{name: a, steps: [{expect: [{qname: a., qtype: A, client: nslookup}]}]}]", "client"},
		{"a delete of an unknown kind", "scenarios: [{name: a, steps: [{delete: {kind: Deployment, name: d}}]}]", "delete"},
		{"two scenarios with one name", "scenarios: [{name: a, steps: [{delete: {kind: Pod, name: p}}]}, {name: a, steps: [{delete: {kind: Pod, name: p}}]}]", "used twice"},
		{"no scenarios", "scenarios: []", "no scenarios"},
	} {
		t.Run(tc.name+" is an error", func(t *testing.T) {
			_, err := parseScenarios([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeObjects(t *testing.T) {
	objs, err := decodeObjects("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n")
	if err != nil || len(objs) != 2 || objs[1].GetKind() != "Pod" {
		t.Fatalf("%v, %v", objs, err)
	}
	if _, err := decodeObjects("apiVersion: v1\nkind: Service\nmetadata: {}\n"); err == nil {
		t.Fatal("an object without a name: want an error")
	}
}
