package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EtcdCluster is a cluster of bin/etcd members on 127.0.0.1, started by
// StartEtcdCluster. Each member's peers reach it through a peer proxy (StartPeerProxy), so
// that a test can partition one member while it keeps running.
type EtcdCluster struct {
	Members []*EtcdMember

	t      testing.TB
	client *clientv3.Client
}

// EtcdMember is one member of an EtcdCluster: an Etcd (Stop, Restart,
// Process, Ctl ...) with its member ID and the proxy in front of its peer
// port.
type EtcdMember struct {
	*Etcd
	// ID is the member ID in hex, as etcd prints it.
	ID string
	// Peer is the proxy every other member dials to reach this one.
	Peer *Proxy
}

// StartEtcdCluster runs size etcd members, each with extraArgs after the
// harness's own flags, and waits until every member is healthy (the
// cluster has a leader).
func StartEtcdCluster(t testing.TB, size int, extraArgs ...string) *EtcdCluster {
	t.Helper()
	c := &EtcdCluster{t: t}
	members := make([]etcdMember, size)
	peers := make([]string, size)
	for i := range members {
		listen := HostPort(FreePort(t))
		proxy := StartPeerProxy(t, listen)
		members[i] = etcdMember{label: fmt.Sprintf("etcd-m%d", i), name: fmt.Sprintf("m%d", i),
			clientURL: "http://" + HostPort(FreePort(t)), listenPeer: "http://" + listen, advertisePeer: proxy.URL()}
		peers[i] = members[i].name + "=" + proxy.URL()
		c.Members = append(c.Members, &EtcdMember{Peer: proxy})
	}
	for i, m := range members {
		m.initialCluster = strings.Join(peers, ",")
		c.Members[i].Etcd = launchEtcd(t, m, etcdAccess{}, extraArgs...)
	}
	for _, m := range c.Members {
		m.waitHealthy()
	}
	c.readIDs()
	return c
}

// readIDs fills in every member's ID from the member list.
func (c *EtcdCluster) readIDs() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Client().MemberList(ctx)
	if err != nil {
		c.t.Fatalf("etcd member list: %v", err)
	}
	for _, info := range resp.Members {
		for _, m := range c.Members {
			if len(info.ClientURLs) > 0 && info.ClientURLs[0] == m.Endpoint {
				m.ID = strconv.FormatUint(info.ID, 16)
			}
		}
	}
	for _, m := range c.Members {
		if m.ID == "" {
			c.t.Fatalf("etcd member %s is not in the member list", m.Endpoint)
		}
	}
}

// Endpoints returns every member's client URL.
func (c *EtcdCluster) Endpoints() []string {
	var endpoints []string
	for _, m := range c.Members {
		endpoints = append(endpoints, m.Endpoint)
	}
	return endpoints
}

// Client returns a clientv3 client for every member, shared by every
// caller and closed when the test ends (root's once EnableAuth ran).
func (c *EtcdCluster) Client() *clientv3.Client {
	c.t.Helper()
	if c.client == nil {
		c.client = c.newClient("", "")
	}
	return c.client
}

// Leader returns the member that the members asked agree leads, or an
// error when they do not agree or none answers.
func (c *EtcdCluster) Leader(ctx context.Context) (*EtcdMember, error) {
	var leader uint64
	for _, m := range c.Members {
		status, err := c.Client().Status(ctx, m.Endpoint)
		if err != nil {
			continue // a member down or paused has no say
		}
		if leader != 0 && status.Leader != leader {
			return nil, fmt.Errorf("members disagree on the leader: %x and %x", leader, status.Leader)
		}
		leader = status.Leader
	}
	for _, m := range c.Members {
		if m.ID == strconv.FormatUint(leader, 16) {
			return m, nil
		}
	}
	return nil, errors.New("no member names a leader")
}

// Healthy returns nil when every member answers /health with true.
func (c *EtcdCluster) Healthy() error {
	client := etcdAccess{}.httpClient()
	for _, m := range c.Members {
		if err := checkEtcdHealth(client, m.Endpoint); err != nil {
			return fmt.Errorf("etcd member %s: %w", m.ID, err)
		}
	}
	return nil
}

// Partition cuts member m off from every other member, both ways, while
// it keeps running and serving its clients; Heal joins it again.
func (c *EtcdCluster) Partition(m *EtcdMember) { c.setPartition(m, (*Proxy).Cut) }

// Heal ends Partition.
func (c *EtcdCluster) Heal(m *EtcdMember) { c.setPartition(m, (*Proxy).Mend) }

func (c *EtcdCluster) setPartition(m *EtcdMember, apply func(*Proxy, string)) {
	for _, other := range c.Members {
		if other == m {
			apply(other.Peer, "")
		} else {
			apply(other.Peer, m.ID)
		}
	}
}
