package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/poll"
)

// server is one etcd member or grpc-proxy process and the URL its
// clients use.
type server struct {
	name    string
	url     string
	path    string // the binary; "" for the etcd binary
	argv    []string
	metrics string // its Prometheus metrics' URL
	proc    *kubeproc.Process
}

// cluster is three etcd members on 127.0.0.1 and the grpc-proxies in
// front of them.
type cluster struct {
	etcd    string // the etcd binary
	dir     string
	members []*server
	proxies []*server
	group   *kubeproc.Group
	client  *clientv3.Client // to the members, for the writer and the admin
}

const memberCount = 3

// startCluster starts three members and waits until they serve.
func startCluster(ctx context.Context, etcdBin, dir string, progressNotify time.Duration) (*cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &cluster{etcd: etcdBin, dir: dir, group: kubeproc.NewGroup()}
	var peers []string
	for i := range memberCount {
		clientPort, err := freePort()
		if err != nil {
			return nil, err
		}
		peerPort, err := freePort()
		if err != nil {
			return nil, err
		}
		m := &server{name: fmt.Sprintf("m%d", i), url: localURL(clientPort)}
		m.argv = []string{"--name", m.name, "--data-dir", filepath.Join(dir, m.name),
			"--listen-client-urls", m.url, "--advertise-client-urls", m.url,
			"--listen-peer-urls", localURL(peerPort), "--initial-advertise-peer-urls", localURL(peerPort),
			"--initial-cluster-state", "new", "--initial-cluster-token", "fanout-bench",
			"--watch-progress-notify-interval", progressNotify.String(),
			"--quota-backend-bytes", strconv.Itoa(8 << 30), "--log-level", "warn"}
		peers = append(peers, m.name+"="+localURL(peerPort))
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.argv = append(m.argv, "--initial-cluster", strings.Join(peers, ","))
		if err := c.start(m); err != nil {
			return nil, err
		}
	}
	client, err := newClient(c.memberURLs())
	if err != nil {
		return nil, err
	}
	c.client = client
	return c, c.waitServing(ctx, client, "the etcd cluster")
}

func (c *cluster) start(s *server) error {
	path := s.path
	if path == "" {
		path = c.etcd
	}
	p, err := c.group.Start(kubeproc.Spec{
		Name: s.name, Path: path, Args: s.argv, Log: filepath.Join(c.dir, s.name+".log"),
	})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// startProxies starts n proxies of tier in front of the members.
func (c *cluster) startProxies(ctx context.Context, n int, tier string, o options) error {
	for i := range n {
		port, err := freePort()
		if err != nil {
			return err
		}
		p := &server{name: fmt.Sprintf("proxy%d", i), url: localURL(port), metrics: localURL(port) + "/proxy/metrics"}
		listen := fmt.Sprintf("127.0.0.1:%d", port)
		switch tier {
		case tierGRPCProxy:
			p.argv = []string{"grpc-proxy", "start", "--endpoints", strings.Join(c.memberURLs(), ","),
				"--listen-addr", listen, "--advertise-client-url", listen, "--data-dir", filepath.Join(c.dir, p.name)}
		default:
			web, err := freePort()
			if err != nil {
				return err
			}
			batch := time.Duration(0)
			if tier == tierRelayBatched {
				batch = o.watchBatch
			}
			p.path, p.metrics = o.self, localURL(web)+"/metrics"
			p.argv = relayArgv(c.memberURLs(), listen, fmt.Sprintf("127.0.0.1:%d", web), batch)
		}
		if err := c.start(p); err != nil {
			return err
		}
		c.proxies = append(c.proxies, p)
		if err := c.waitServingAt(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// stopProxies stops every proxy.
func (c *cluster) stopProxies() {
	for _, p := range c.proxies {
		_ = p.proc.Stop(5 * time.Second)
	}
	c.proxies = nil
}

// restart stops s and starts it again with the same arguments.
func (c *cluster) restart(ctx context.Context, s *server) error {
	if err := s.proc.Stop(5 * time.Second); err != nil {
		return fmt.Errorf("stopping %s: %w", s.name, err)
	}
	if err := c.start(s); err != nil {
		return err
	}
	return c.waitServingAt(ctx, s)
}

func (c *cluster) waitServingAt(ctx context.Context, s *server) error {
	client, err := newClient([]string{s.url})
	if err != nil {
		return err
	}
	defer client.Close()
	return c.waitServing(ctx, client, s.name)
}

// waitServing polls until a read through client succeeds.
func (c *cluster) waitServing(ctx context.Context, client *clientv3.Client, what string) error {
	err := poll.Until(ctx, time.Minute, func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := client.Get(rctx, "/health")
		return err
	})
	if err != nil {
		return fmt.Errorf("%s not serving: %w", what, err)
	}
	return nil
}

// moveLeader hands the leadership to another member and returns the new
// leader's name.
func (c *cluster) moveLeader(ctx context.Context) (string, error) {
	var leader uint64
	ids := map[uint64]string{}
	for _, m := range c.members {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := c.client.Status(rctx, m.url)
		cancel()
		if err != nil {
			return "", err
		}
		leader, ids[st.Header.MemberId] = st.Leader, m.url
	}
	for id, url := range ids {
		if id == leader {
			continue
		}
		lc, err := newClient([]string{ids[leader]})
		if err != nil {
			return "", err
		}
		defer lc.Close()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := lc.MoveLeader(rctx, id); err != nil {
			return "", fmt.Errorf("moving the leader to %s: %w", url, err)
		}
		return url, nil
	}
	return "", fmt.Errorf("no other member than the leader %x", leader)
}

func (c *cluster) memberURLs() []string {
	urls := make([]string, len(c.members))
	for i, m := range c.members {
		urls[i] = m.url
	}
	return urls
}

// servers is every member and proxy, for the resource figures.
func (c *cluster) servers() []*server {
	return append(append([]*server(nil), c.members...), c.proxies...)
}

func (c *cluster) close() {
	if c.client != nil {
		c.client.Close()
	}
	c.group.StopAll(5*time.Second, nil)
}

// newClient returns a client of endpoints with skydns's client options,
// except that it connects in the background: on a loaded machine a
// thousand clients connecting at once take longer than the dial timeout,
// and a reader's ListWatcher retries anyway.
func newClient(endpoints []string) (*clientv3.Client, error) {
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = endpoints
	cfg, err := opts.Config(nil)
	if err != nil {
		return nil, err
	}
	cfg.DialTimeout = 0
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client of %v: %w", endpoints, err)
	}
	return c, nil
}

func localURL(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// listCache is what the proxies' caches did with list pages (serializable
// range requests): answered them, or passed them on to etcd.
type listCache struct{ hits, misses float64 }

// cacheCounts reads each proxy's cache counters from its /proxy/metrics.
func (c *cluster) cacheCounts() (map[string]listCache, error) {
	counts := map[string]listCache{}
	for _, p := range c.proxies {
		m, err := harness.ScrapeMetrics(p.metrics)
		if err != nil {
			return counts, fmt.Errorf("%s: %w", p.name, err)
		}
		counts[p.name] = listCache{hits: m["etcd_grpc_proxy_cache_hits_total"], misses: m["etcd_grpc_proxy_cache_misses_total"]}
	}
	return counts, nil
}

// since is what the counters of one proxy counted after they read
// before; a proxy restarted meanwhile counted from zero.
func (c listCache) since(before listCache) listCache {
	if c.hits < before.hits || c.misses < before.misses {
		return c
	}
	return listCache{hits: c.hits - before.hits, misses: c.misses - before.misses}
}
