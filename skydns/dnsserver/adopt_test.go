package dnsserver

import (
	"errors"
	"net"
	"testing"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// TestAdoptAnswersTheQueriesQueuedInAGoneServersSockets shares a port
// between a server and two sockets nobody reads (a server that is gone,
// whose sockets another process kept open): the queries the kernel gave
// those sockets are answered once the server adopts them, and the sockets
// are closed.
func TestAdoptAnswersTheQueriesQueuedInAGoneServersSockets(t *testing.T) {
	survivor := startShared(t, freeUDPAddr(t), "survivor")
	gone, err := fastpath.ListenUDPShared(survivor.Addr(), 2)
	if err != nil {
		t.Fatal(err)
	}
	const queries = 20 // from 20 source ports: some reach the gone sockets
	answers := make(chan string, queries)
	for range queries {
		go func() { answers <- askWhoOrErr(survivor.Addr()) }()
	}
	waitQueued(t, udpSockets(gone))
	if err := survivor.Adopt(t.Context(), gone); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	for range queries {
		if who := <-answers; who != "survivor" {
			t.Fatalf("a query got %q; want the survivor's answer", who)
		}
	}
	for _, c := range gone {
		if _, err := c.Write([]byte{0}); !errors.Is(err, net.ErrClosed) {
			t.Errorf("an adopted socket after Adopt: write error %v, want it closed", err)
		}
	}
}
