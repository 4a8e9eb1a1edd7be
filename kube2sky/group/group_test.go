package group

import (
	"slices"
	"testing"

	"github.com/kubesky/kubesky/kube2sky/records"
)

func TestKeysSortByKindThenNameSoAServiceWinsAPTROverTheHosts(t *testing.T) {
	keys := []Key{{Kind: Hosts}, ServiceKey("ns", "b"), {Kind: Pod, Name: "ns/10-0-0-1"}, ServiceKey("ns", "a"), {}}
	slices.SortFunc(keys, Key.Compare)
	var got []string
	for _, k := range keys {
		got = append(got, k.String())
	}
	if want := []string{"zone", "ns/a", "ns/b", "hosts", "pod/ns/10-0-0-1"}; !slices.Equal(got, want) {
		t.Errorf("sorted keys %q, want %q", got, want)
	}
}

func TestAServiceNameSplitsIntoNamespaceAndName(t *testing.T) {
	if ns, name := SplitServiceName(ServiceKey("kube-system", "kube-dns").Name); ns != "kube-system" || name != "kube-dns" {
		t.Errorf("split %q %q", ns, name)
	}
}

func TestSplitPTRsSeparatesTheReverseTree(t *testing.T) {
	zone := records.NewZone("cluster.local", "/skydns", 30, "me")
	entries := []records.Entry{{Key: "/skydns/local/cluster/svc/ns/a/x"}, {Key: "/skydns/arpa/in-addr/10/0/0/1"}}
	d := SplitPTRs(zone, entries)
	if len(d.Forward) != 1 || d.Forward[0].Key != entries[0].Key || len(d.PTR) != 1 || d.PTR[0].Key != entries[1].Key {
		t.Errorf("forward %v, PTR %v", EntryKeys(d.Forward), EntryKeys(d.PTR))
	}
}
