package kube2sky

import (
	"reflect"
	"testing"
)

func TestTheFirstClaimantWinsAndTheNextTakesOver(t *testing.T) {
	t.Parallel()
	ix := newPTRIndex()
	if h := ix.set("ns/b", []string{"k"}); h != nil {
		t.Errorf("first claim handed off to %v", h)
	}
	if w := ix.winner("k"); w != "ns/b" {
		t.Errorf("winner = %q, want ns/b", w)
	}
	if h := ix.set("ns/a", []string{"k", "j"}); h != nil {
		t.Errorf("a winning claim handed off to %v", h)
	}
	if w := ix.winner("k"); w != "ns/a" {
		t.Errorf("winner = %q, want ns/a (sorts first)", w)
	}
	if h := ix.set("ns/a", nil); !reflect.DeepEqual(h, []string{"ns/b"}) {
		t.Errorf("the winner's release handed off to %v, want [ns/b]", h)
	}
	if w := ix.winner("k"); w != "ns/b" {
		t.Errorf("winner = %q after a left, want ns/b", w)
	}
	if w := ix.winner("j"); w != "" {
		t.Errorf("an unclaimed key has winner %q", w)
	}
}

func TestAServiceStaysResponsibleForWhatItHeld(t *testing.T) {
	t.Parallel()
	ix := newPTRIndex()
	ix.set("ns/a", []string{"k1", "k2"})
	ix.hold("ns/a", nil)
	ix.set("ns/a", []string{"k2", "k3"})
	if got := ix.responsible("ns/a"); !reflect.DeepEqual(got, []string{"k1", "k2", "k3"}) {
		t.Errorf("responsible before the write = %v", got)
	}
	ix.hold("ns/a", nil)
	if got := ix.responsible("ns/a"); !reflect.DeepEqual(got, []string{"k2", "k3"}) {
		t.Errorf("responsible after the write = %v", got)
	}
	ix.reset(map[string][]string{"ns/b": {"k2"}})
	if got := ix.responsible("ns/a"); len(got) != 0 {
		t.Errorf("after a reset, a is responsible for %v", got)
	}
	if w := ix.winner("k2"); w != "ns/b" {
		t.Errorf("after a reset, k2 is won by %q", w)
	}
}
