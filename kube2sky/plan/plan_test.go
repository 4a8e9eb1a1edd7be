package plan

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/kubesky/kubesky/kube2sky/group"
)

func owned(value string, rev int64) KV {
	return Decode([]byte(value), rev)
}

func TestPlanTouchesOnlyWhatDiffersAndWhatItOwns(t *testing.T) {
	t.Parallel()
	mine := `{"host":"10.0.0.1","owner":"me"}`
	want := []Want{
		{Key: "/same", Value: []byte(mine)},
		{Key: "/changed", Value: []byte(`{"host":"10.0.0.2","owner":"me"}`)},
		{Key: "/new", Value: []byte(`{"host":"10.0.0.3","owner":"me"}`)},
		{Key: "/foreign", Value: []byte(`{"host":"10.0.0.4","owner":"me"}`)},
	}
	cur := Current{
		"/same":         owned(mine, 5),
		"/changed":      owned(`{"host":"10.9.9.9","owner":"me"}`, 6),
		"/foreign":      owned(`{"host":"192.0.2.1"}`, 7),
		"/stale":        owned(`{"host":"10.0.0.9","owner":"me"}`, 8),
		"/other-owner":  owned(`{"host":"10.0.0.9","owner":"you"}`, 9),
		"/not-a-record": owned(`not json "owner"`, 10),
	}
	got := Diff("me", want, cur)
	wantChanges := []Change{
		{Key: "/changed", Value: want[1].Value, ModRev: 6},
		{Key: "/new", Value: want[2].Value},
		{Key: "/stale", ModRev: 8},
	}
	if !reflect.DeepEqual(got.Changes, wantChanges) {
		t.Errorf("Changes:\n got %+v\nwant %+v", got.Changes, wantChanges)
	}
	if got.Foreign != 1 {
		t.Errorf("foreign = %d, want 1", got.Foreign)
	}
}

func TestPlanOfTheSameSetIsEmpty(t *testing.T) {
	t.Parallel()
	value := `{"host":"10.0.0.1","owner":"me"}`
	got := Diff("me", []Want{{Key: "/a", Value: []byte(value)}}, Current{"/a": owned(value, 1)})
	if len(got.Changes) != 0 || got.Foreign != 0 {
		t.Errorf("plan = %+v, want nothing", got)
	}
}

func TestPlanLeavesAKeyKnownToBeCurrentAlone(t *testing.T) {
	t.Parallel()
	value := []byte(`{"host":"10.0.0.1","owner":"me"}`)
	got := Diff("me", []Want{{Key: "/a", Value: value, Current: true}}, Current{})
	if len(got.Changes) != 0 {
		t.Errorf("changes = %+v, want none: the key holds its value already", got.Changes)
	}
}

func changes(puts, deletes int) []Change {
	var out []Change
	for i := range puts {
		out = append(out, Change{Key: fmt.Sprintf("/p%02d", i), Value: []byte("v")})
	}
	for i := range deletes {
		out = append(out, Change{Key: fmt.Sprintf("/d%02d", i)})
	}
	return out
}

func TestBatchesPutBeforeTheyDelete(t *testing.T) {
	t.Parallel()
	in := changes(3, 3)
	if got := Batches(in, 6); len(got) != 1 || len(got[0]) != 6 {
		t.Fatalf("6 changes in batches of 6: %v", got)
	}
	mixed := []Change{in[3], in[0], in[4], in[1], in[5], in[2]}
	got := Batches(mixed, 2)
	if len(got) != 3 {
		t.Fatalf("6 changes in batches of 2: %d batches", len(got))
	}
	var kinds string
	for _, b := range got {
		if len(b) > 2 {
			t.Errorf("batch of %d", len(b))
		}
		for _, c := range b {
			kinds += map[bool]string{true: "p", false: "d"}[c.Value != nil]
		}
	}
	if kinds != "pppddd" {
		t.Errorf("order of puts and deletes = %s, want pppddd", kinds)
	}
}

func TestPackKeepsAServiceInOneTxnWhenItFits(t *testing.T) {
	t.Parallel()
	groups := []GroupChanges{
		{Key: svc("a"), Changes: changes(2, 0)},
		{Key: svc("b"), Changes: changes(3, 0)},
		{Key: svc("c"), Changes: changes(1, 0)},
		{Key: svc("big"), Changes: changes(4, 3)},
		{Key: svc("d"), Changes: changes(1, 0)},
	}
	got := slices.Collect(Pack(slices.Values(groups), 4))
	var shape []string
	for _, b := range got {
		shape = append(shape, fmt.Sprintf("%v:%d", b.Groups, len(b.Changes)))
	}
	want := []string{"[a]:2", "[b c]:4", "[big]:4", "[big]:3", "[d]:1"}
	if !reflect.DeepEqual(shape, want) {
		t.Errorf("packing = %v, want %v", shape, want)
	}
}

// svc is the group of the Service called name ("namespace/name").
func svc(name string) group.Key { return group.Key{Kind: group.Service, Name: name} }
