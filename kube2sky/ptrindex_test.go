package kube2sky

import (
	"reflect"
	"testing"

	"github.com/kubesky/kubesky/kube2sky/group"
)

func TestTheFirstClaimantWinsAndTheNextTakesOver(t *testing.T) {
	t.Parallel()
	ix := newPTRIndex()
	if h := ix.set(svc("ns/b"), []string{"k"}); h != nil {
		t.Errorf("first claim handed off to %v", h)
	}
	if w := ix.winner("k"); w != svc("ns/b") {
		t.Errorf("winner = %q, want ns/b", w)
	}
	if h := ix.set(svc("ns/a"), []string{"k", "j"}); h != nil {
		t.Errorf("a winning claim handed off to %v", h)
	}
	if w := ix.winner("k"); w != svc("ns/a") {
		t.Errorf("winner = %q, want ns/a (sorts first)", w)
	}
	if h := ix.set(svc("ns/a"), nil); !reflect.DeepEqual(h, []group.Key{svc("ns/b")}) {
		t.Errorf("the winner's release handed off to %v, want [ns/b]", h)
	}
	if w := ix.winner("k"); w != svc("ns/b") {
		t.Errorf("winner = %q after a left, want ns/b", w)
	}
	if w := ix.winner("j"); w != (group.Key{}) {
		t.Errorf("an unclaimed key has winner %q", w)
	}
}

func TestAServiceStaysResponsibleForWhatItHeld(t *testing.T) {
	t.Parallel()
	ix := newPTRIndex()
	ix.set(svc("ns/a"), []string{"k1", "k2"})
	ix.hold(svc("ns/a"), nil)
	ix.set(svc("ns/a"), []string{"k2", "k3"})
	if got := ix.responsible(svc("ns/a")); !reflect.DeepEqual(got, []string{"k1", "k2", "k3"}) {
		t.Errorf("responsible before the write = %v", got)
	}
	ix.hold(svc("ns/a"), nil)
	if got := ix.responsible(svc("ns/a")); !reflect.DeepEqual(got, []string{"k2", "k3"}) {
		t.Errorf("responsible after the write = %v", got)
	}
	ix.reset(map[group.Key][]string{svc("ns/b"): {"k2"}})
	if got := ix.responsible(svc("ns/a")); len(got) != 0 {
		t.Errorf("after a reset, a is responsible for %v", got)
	}
	if w := ix.winner("k2"); w != svc("ns/b") {
		t.Errorf("after a reset, k2 is won by %q", w)
	}
}

// svc is the group of the Service called name ("namespace/name").
func svc(name string) group.Key { return group.Key{Kind: group.Service, Name: name} }
