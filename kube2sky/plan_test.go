package kube2sky

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func owned(value string, rev int64) kv {
	return decodeKV([]byte(value), rev)
}

func TestPlanTouchesOnlyWhatDiffersAndWhatItOwns(t *testing.T) {
	t.Parallel()
	mine := `{"host":"10.0.0.1","owner":"me"}`
	want := []desiredKV{
		{key: "/same", value: []byte(mine)},
		{key: "/changed", value: []byte(`{"host":"10.0.0.2","owner":"me"}`)},
		{key: "/new", value: []byte(`{"host":"10.0.0.3","owner":"me"}`)},
		{key: "/foreign", value: []byte(`{"host":"10.0.0.4","owner":"me"}`)},
	}
	cur := current{
		"/same":         owned(mine, 5),
		"/changed":      owned(`{"host":"10.9.9.9","owner":"me"}`, 6),
		"/foreign":      owned(`{"host":"192.0.2.1"}`, 7),
		"/stale":        owned(`{"host":"10.0.0.9","owner":"me"}`, 8),
		"/other-owner":  owned(`{"host":"10.0.0.9","owner":"you"}`, 9),
		"/not-a-record": owned(`not json "owner"`, 10),
	}
	got := plan("me", want, cur)
	wantChanges := []change{
		{key: "/changed", value: want[1].value, modRev: 6},
		{key: "/new", value: want[2].value},
		{key: "/stale", modRev: 8},
	}
	if !reflect.DeepEqual(got.changes, wantChanges) {
		t.Errorf("changes:\n got %+v\nwant %+v", got.changes, wantChanges)
	}
	if got.foreign != 1 {
		t.Errorf("foreign = %d, want 1", got.foreign)
	}
}

func TestPlanOfTheSameSetIsEmpty(t *testing.T) {
	t.Parallel()
	value := `{"host":"10.0.0.1","owner":"me"}`
	got := plan("me", []desiredKV{{key: "/a", value: []byte(value)}}, current{"/a": owned(value, 1)})
	if len(got.changes) != 0 || got.foreign != 0 {
		t.Errorf("plan = %+v, want nothing", got)
	}
}

func TestPlanLeavesAKeyKnownToBeCurrentAlone(t *testing.T) {
	t.Parallel()
	value := []byte(`{"host":"10.0.0.1","owner":"me"}`)
	got := plan("me", []desiredKV{{key: "/a", value: value, current: true}}, current{})
	if len(got.changes) != 0 {
		t.Errorf("changes = %+v, want none: the key holds its value already", got.changes)
	}
}

func changes(puts, deletes int) []change {
	var out []change
	for i := range puts {
		out = append(out, change{key: fmt.Sprintf("/p%02d", i), value: []byte("v")})
	}
	for i := range deletes {
		out = append(out, change{key: fmt.Sprintf("/d%02d", i)})
	}
	return out
}

func TestBatchesPutBeforeTheyDelete(t *testing.T) {
	t.Parallel()
	in := changes(3, 3)
	if got := batches(in, 6); len(got) != 1 || len(got[0]) != 6 {
		t.Fatalf("6 changes in batches of 6: %v", got)
	}
	mixed := []change{in[3], in[0], in[4], in[1], in[5], in[2]}
	got := batches(mixed, 2)
	if len(got) != 3 {
		t.Fatalf("6 changes in batches of 2: %d batches", len(got))
	}
	var kinds string
	for _, b := range got {
		if len(b) > 2 {
			t.Errorf("batch of %d", len(b))
		}
		for _, c := range b {
			kinds += map[bool]string{true: "p", false: "d"}[c.value != nil]
		}
	}
	if kinds != "pppddd" {
		t.Errorf("order of puts and deletes = %s, want pppddd", kinds)
	}
}

func TestPackKeepsAServiceInOneTxnWhenItFits(t *testing.T) {
	t.Parallel()
	groups := []serviceChanges{
		{key: svc("a"), changes: changes(2, 0)},
		{key: svc("b"), changes: changes(3, 0)},
		{key: svc("c"), changes: changes(1, 0)},
		{key: svc("big"), changes: changes(4, 3)},
		{key: svc("d"), changes: changes(1, 0)},
	}
	got := slices.Collect(pack(slices.Values(groups), 4))
	var shape []string
	for _, b := range got {
		shape = append(shape, fmt.Sprintf("%v:%d", b.services, len(b.changes)))
	}
	want := []string{"[a]:2", "[b c]:4", "[big]:4", "[big]:3", "[d]:1"}
	if !reflect.DeepEqual(shape, want) {
		t.Errorf("packing = %v, want %v", shape, want)
	}
}
