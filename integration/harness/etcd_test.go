package harness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestEtcdRestartKeepsDataAndPorts(t *testing.T) {
	e := StartEtcd(t)
	e.Ctl("put", "/skydns/local/cluster/x", `{"host":"10.0.0.1"}`)
	endpoint := e.Endpoint

	e.Stop()
	if exited, _ := e.Process.Exited(); !exited {
		t.Fatal("etcd still running after Stop")
	}
	e.Restart()

	if e.Endpoint != endpoint {
		t.Fatalf("endpoint changed across Restart: %s -> %s", endpoint, e.Endpoint)
	}
	got := e.Ctl("get", "--print-value-only", "/skydns/local/cluster/x")
	if strings.TrimSpace(got) != `{"host":"10.0.0.1"}` {
		t.Fatalf("value after Restart = %q", got)
	}
}

func TestEtcdCompactAndDefrag(t *testing.T) {
	e := StartEtcd(t)
	c := e.Client()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	first, err := c.Put(ctx, "k", "1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "k", "2"); err != nil {
		t.Fatal(err)
	}

	if rev := e.Compact(); rev <= first.Header.Revision {
		t.Fatalf("compacted at %d, want > %d", rev, first.Header.Revision)
	}
	e.Defrag()

	_, err = c.Get(ctx, "k", clientv3.WithRev(first.Header.Revision))
	if !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("get at compacted revision: err = %v, want ErrCompacted", err)
	}
}
