package main

import (
	"context"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// pagesLeft answers list pages, saying More until its count runs out, and
// counts and revision checks with one key.
type pagesLeft struct {
	clientv3.Watcher
	left int
}

func (p *pagesLeft) Get(_ context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if clientv3.OpGet(key, opts...).IsCountOnly() {
		return &clientv3.GetResponse{Count: 1}, nil
	}
	p.left--
	return &clientv3.GetResponse{More: p.left > 0, Header: &etcdserverpb.ResponseHeader{}}, nil
}

// TestAListSlotIsHeldFromTheFirstPageToTheLast: with one slot, a second
// reader's list page waits until the first reader's last page; counts
// never wait.
func TestAListSlotIsHeldFromTheFirstPageToTheLast(t *testing.T) {
	slots := newListSlots(t.Context(), 1)
	first, second := slots.source(&pagesLeft{left: 2}), slots.source(&pagesLeft{left: 1})
	if _, err := first.Get(t.Context(), "/a"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := second.Get(t.Context(), "/a"); done <- err }()
	if _, err := second.Get(t.Context(), "/a", clientv3.WithCountOnly()); err != nil {
		t.Fatalf("a count waited for a slot: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the second list's page ran while the first list held the only slot (err %v)", err)
	case <-time.After(100 * time.Millisecond): // a wait that must not end: the page stays blocked
	}
	if _, err := first.Get(t.Context(), "/b"); err != nil { // the first list's last page
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second list's page still waits after the first list ended")
	}
}
