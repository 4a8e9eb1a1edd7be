package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdStartTimeout bounds how long StartEtcd and Restart wait for /health.
const EtcdStartTimeout = 30 * time.Second

// Etcd is a single-member etcd server started by StartEtcd.
type Etcd struct {
	// Endpoint is the client URL, http://127.0.0.1:<port>.
	Endpoint string
	// DataDir survives Stop and Restart; it is removed when the test ends.
	DataDir string
	// Process is the running bin/etcd.
	Process *Process

	t      testing.TB
	access etcdAccess
	client *clientv3.Client
}

// StartEtcd runs bin/etcd on free ports on 127.0.0.1 with a data directory
// under t.TempDir(), and waits until it reports healthy.
func StartEtcd(t testing.TB) *Etcd {
	t.Helper()
	return startEtcd(t, "http", etcdAccess{})
}

// startEtcd runs bin/etcd with client URLs of scheme, reached through
// access, with extraArgs after the harness's own flags.
func startEtcd(t testing.TB, scheme string, access etcdAccess, extraArgs ...string) *Etcd {
	t.Helper()
	peer := "http://" + HostPort(FreePort(t))
	m := etcdMember{label: "etcd", name: "harness", clientURL: scheme + "://" + HostPort(FreePort(t)), listenPeer: peer, advertisePeer: peer}
	m.initialCluster = m.name + "=" + peer
	e := launchEtcd(t, m, access, extraArgs...)
	e.waitHealthy()
	return e
}

// etcdMember is where one etcd member listens and whom it starts with.
type etcdMember struct {
	label          string // the process's label in logs
	name           string
	clientURL      string
	listenPeer     string // the URL the member listens on for peers
	advertisePeer  string // the URL its peers dial (a peer proxy in a cluster)
	initialCluster string // name=advertisePeer,... of every member
}

// launchEtcd starts bin/etcd as member m with a data directory under
// t.TempDir(), without waiting for it to be healthy.
func launchEtcd(t testing.TB, m etcdMember, access etcdAccess, extraArgs ...string) *Etcd {
	t.Helper()
	RequireBinaries(t, "etcd")
	e := &Etcd{t: t, DataDir: t.TempDir(), access: access, Endpoint: m.clientURL}
	e.Process = StartProcess(t, ProcessSpec{
		Name: m.label,
		Path: Binary("etcd"),
		Args: append([]string{
			"--name=" + m.name,
			"--data-dir=" + e.DataDir,
			"--listen-client-urls=" + e.Endpoint,
			"--advertise-client-urls=" + e.Endpoint,
			"--listen-peer-urls=" + m.listenPeer,
			"--initial-advertise-peer-urls=" + m.advertisePeer,
			"--initial-cluster=" + m.initialCluster,
			"--unsafe-no-fsync", // test data; a clean Stop still flushes
			"--log-level=warn",
		}, extraArgs...),
	})
	return e
}

// Endpoints returns the client endpoints, for clientv3.Config.
func (e *Etcd) Endpoints() []string { return []string{e.Endpoint} }

// Stop stops etcd gracefully, keeping its data directory and ports, until
// Restart.
func (e *Etcd) Stop() {
	e.t.Helper()
	e.Process.Stop()
}

// Restart stops etcd if it is running and starts it again on the same ports
// with the same data, waiting until it is healthy.
func (e *Etcd) Restart() {
	e.t.Helper()
	e.Process.Stop()
	e.Process.Start()
	e.waitHealthy()
}

func (e *Etcd) waitHealthy() {
	e.t.Helper()
	client := e.access.httpClient()
	err := Poll(EtcdStartTimeout, func() error {
		if err := e.Process.ErrIfExited(); err != nil {
			return err
		}
		return checkEtcdHealth(client, e.Endpoint)
	})
	if err != nil {
		e.t.Fatalf("etcd at %s not healthy: %v", e.Endpoint, err)
	}
}

func checkEtcdHealth(client *http.Client, endpoint string) error {
	resp, err := client.Get(endpoint + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("GET /health: %s %s", resp.Status, body)
	}
	return nil
}

// Client returns a clientv3 client for this etcd, shared by every caller and
// closed when the test ends. It reconnects by itself across Stop and Restart.
func (e *Etcd) Client() *clientv3.Client {
	e.t.Helper()
	if e.client != nil {
		return e.client
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   e.Endpoints(),
		DialTimeout: 5 * time.Second,
		TLS:         e.access.tls,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		e.t.Fatalf("etcd client: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	e.client = c
	return c
}

// Compact compacts the keyspace at the current revision, physically, so
// watches from older revisions fail with ErrCompacted. It returns that
// revision.
func (e *Etcd) Compact() int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.Client()
	resp, err := c.Get(ctx, "compact-probe", clientv3.WithCountOnly())
	if err != nil {
		e.t.Fatalf("etcd current revision: %v", err)
	}
	rev := resp.Header.Revision
	if _, err := c.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		e.t.Fatalf("etcd compact at %d: %v", rev, err)
	}
	return rev
}

// Defrag defragments the member's backend.
func (e *Etcd) Defrag() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.Client().Defragment(ctx, e.Endpoint); err != nil {
		e.t.Fatalf("etcd defrag: %v", err)
	}
}

// Ctl runs bin/etcdctl against this etcd with args and returns its standard
// output, failing the test if it fails.
func (e *Etcd) Ctl(args ...string) string {
	e.t.Helper()
	RequireBinaries(e.t, "etcdctl")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	flags := append([]string{"--endpoints=" + e.Endpoint}, e.access.ctlArgs...)
	cmd := exec.CommandContext(ctx, Binary("etcdctl"), append(flags, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("etcdctl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
