package clustertest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"

	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/poll"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The shared etcd's paths: each member's Service, and the relays'.
var (
	etcdMembers    = []string{"10.96.0.11:2379", "10.96.0.12:2379", "10.96.0.13:2379"}
	relayService   = "10.96.0.14"
	securityRecord = "/skydns/local/cluster/svc/default/kubernetes"
)

// checkSecurity tries every etcd credential the pods of the reader
// components mount, from a node, on every path to the records: at each
// etcd member (whose CA did not sign a reader's certificate, so the
// handshake is refused before any request) and at each relay pod, where
// every write is PermissionDenied and every Lease, Cluster, Maintenance
// and Auth call Unimplemented. The whole keyspace, read as root, is the
// same byte for byte afterwards, and kube2sky still writes.
func checkSecurity(t *testing.T, c *cluster.Cluster, readers ...string) {
	waitEtcdAuth(t, c)
	root := etcdClientAt(t, c, etcdSecret(t, c, "kubesky-etcd-admin"), etcdMembers[0], "")
	before := readEverything(t, root)
	relays := readyPods(t, c, "etcd-relay")
	if len(relays) == 0 {
		t.Fatal("no ready relay")
	}
	for _, component := range readers {
		for _, name := range mountedSecrets(t, c, component) {
			secret := etcdSecret(t, c, name)
			for _, member := range etcdMembers {
				t.Run(component+"'s "+name+" opens no member at "+member, func(t *testing.T) {
					checkHandshakeRefused(t, c, secret, member, "")
				})
			}
			for _, relay := range relays {
				t.Run(component+"'s "+name+" only reads at relay "+relay.Name, func(t *testing.T) {
					checkOnlyReads(t, etcdClientAt(t, c, secret, net.JoinHostPort(relay.Status.PodIP, "2379"), relayService))
				})
			}
		}
	}
	if after := readEverything(t, root); after != before {
		t.Errorf("etcd changed under the attempts:\n%s\nwas:\n%s", after, before)
	}
	t.Run("kube2sky writes under its own user, and skydns answers through the relays", func(t *testing.T) {
		checkKube2skyWrites(t, c, "security-check")
	})
}

// checkKube2skyWrites creates the Service svc and checks that kube2sky
// writes its record into etcd (read as root) and that it resolves.
func checkKube2skyWrites(t *testing.T, c *cluster.Cluster, svc string) {
	t.Helper()
	root := etcdClientAt(t, c, etcdSecret(t, c, "kubesky-etcd-admin"), etcdMembers[0], "")
	createService(t, c, svc)
	key := "/skydns/local/cluster/svc/default/" + svc + "/"
	polltest.Within(t, time.Minute, "kube2sky's record of the new Service", func() error {
		resp, err := root.Get(t.Context(), key, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count == 0 {
			err = fmt.Errorf("no key under %s", key)
		}
		return err
	})
	polltest.Within(t, time.Minute, "the new Service resolving", func() error {
		return resolves(t, c, svc+".default.svc.cluster.local.")
	})
}

// waitEtcdAuth waits for the Job that turns etcd's auth on to succeed,
// and shows its log if it does not.
func waitEtcdAuth(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	err := poll.Every(t.Context(), 3*time.Minute, apiPoll, func(ctx context.Context) error {
		job, err := c.Client.BatchV1().Jobs("kube-system").Get(ctx, "kubesky-etcd-auth", metav1.GetOptions{})
		if err == nil && job.Status.Succeeded == 0 {
			err = fmt.Errorf("not done: %d failed", job.Status.Failed)
		}
		return err
	})
	if err != nil {
		out, _ := c.Cfg().Kubectl(t.Context(), "-n", "kube-system", "logs", "job/kubesky-etcd-auth").CombinedOutput()
		t.Fatalf("the Job kubesky-etcd-auth: %v; its log:\n%s", err, out)
	}
}

// mountedSecrets are the etcd Secrets the pods of component mount.
func mountedSecrets(t *testing.T, c *cluster.Cluster, component string) []string {
	t.Helper()
	pods := readyPods(t, c, component)
	if len(pods) == 0 {
		t.Fatalf("no ready %s pod", component)
	}
	var names []string
	for _, v := range pods[0].Spec.Volumes {
		if v.Secret != nil && strings.HasPrefix(v.Secret.SecretName, "kubesky-etcd-") {
			names = append(names, v.Secret.SecretName)
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s mounts no etcd Secret", pods[0].Name)
	}
	return names
}

// etcdClientAt is a client of the etcd (or relay) at addr, dialed from the
// first node's network namespace with the Secret's certificate, verifying
// the server as serverName (default: addr's host). gRPC verifies the
// endpoint's host whatever the tls.Config's ServerName, so the endpoint is
// serverName and the dialer goes to addr.
func etcdClientAt(t *testing.T, c *cluster.Cluster, secret *corev1.Secret, addr, serverName string) *clientv3.Client {
	t.Helper()
	endpoint := addr
	if serverName != "" {
		_, port, _ := net.SplitHostPort(addr)
		endpoint = net.JoinHostPort(serverName, port)
	}
	dial := cluster.DialInNetNS(c.Cfg().ClientNetNS())
	client, err := clientv3.New(clientv3.Config{
		Endpoints: []string{"https://" + endpoint}, DialTimeout: 5 * time.Second, TLS: secretTLS(t, secret), Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, "tcp", addr) })},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// secretTLS presents the Secret's client certificate and trusts its ca.crt.
func secretTLS(t *testing.T, secret *corev1.Secret) *tls.Config {
	t.Helper()
	pair, err := tls.X509KeyPair(secret.Data["client.crt"], secret.Data["client.key"])
	if err != nil {
		t.Fatalf("%s: %v", secret.Name, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		t.Fatalf("%s: no ca.crt", secret.Name)
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// checkHandshakeRefused: the server at addr (verified as serverName,
// default addr's host) refuses the Secret's certificate with a TLS alert,
// so no request reaches it.
func checkHandshakeRefused(t *testing.T, c *cluster.Cluster, secret *corev1.Secret, addr, serverName string) {
	t.Helper()
	err := handshake(t, c, secret, addr, serverName)
	if err == nil || !strings.Contains(err.Error(), "remote error: tls") {
		t.Fatalf("%s accepted the certificate (%v)", addr, err)
	}
	t.Logf("refused: %v", err)
}

// handshake connects to addr from a node with the Secret's certificate
// and trusting its ca.crt, verifying the server as serverName (default:
// addr's host), and reads: nil if the server accepted the certificate.
// Under TLS 1.3 the server's refusal is an alert that comes with the
// first read; a server that accepted sends data or waits.
func handshake(t *testing.T, c *cluster.Cluster, secret *corev1.Secret, addr, serverName string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	raw, err := cluster.DialInNetNS(c.Cfg().ClientNetNS())(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dialing %s: %v", addr, err)
	}
	defer raw.Close()
	cfg := secretTLS(t, secret)
	if cfg.ServerName = serverName; serverName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		return err
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	if netErr := net.Error(nil); errors.As(err, &netErr) && netErr.Timeout() {
		return nil
	}
	return err
}

// checkOnlyReads: through a relay, the credential lists the records, and
// every attempt to change them or to reach another etcd service fails.
func checkOnlyReads(t *testing.T, client *clientv3.Client) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if resp, err := client.Get(ctx, "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count == 0 {
		t.Fatalf("reading the records: %v, %v", resp, err)
	}
	for _, write := range etcdtest.Writes(securityRecord + "/x") {
		if err := attempt(ctx, client, write); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s: %v, want permission denied", write.Name, err)
		}
	}
	for _, call := range etcdtest.Administration() {
		if err := attempt(ctx, client, call); status.Code(err) != codes.Unimplemented {
			t.Errorf("%s: %v, want Unimplemented", call.Name, err)
		}
	}
	t.Logf("%d writes refused (permission denied), %d calls of other services Unimplemented", len(etcdtest.Writes("")), len(etcdtest.Administration()))
}

func attempt(ctx context.Context, client *clientv3.Client, a etcdtest.Attempt) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return a.Do(ctx, client)
}

// readEverything is every key of etcd with its value and revisions.
func readEverything(t *testing.T, root *clientv3.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := root.Get(ctx, "\x00", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, kv := range resp.Kvs {
		fmt.Fprintf(&b, "%q=%q create %d mod %d version %d lease %d\n", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease)
	}
	return b.String()
}

// checkNodeHoldsOnlyItsKey: a node-local pod's volumes are its etcd
// Secret and memory-backed scratch directories, and that Secret holds one
// private key, of the node-local reader's certificate.
func checkNodeHoldsOnlyItsKey(t *testing.T, c *cluster.Cluster) {
	pods := readyPods(t, c, "node-local")
	if len(pods) == 0 {
		t.Fatal("no node-local pod")
	}
	for _, v := range pods[0].Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
		case v.Secret != nil && v.Secret.SecretName == "kubesky-etcd-node-local":
			checkOneKey(t, etcdSecret(t, c, v.Secret.SecretName), "node-local")
		default:
			t.Errorf("volume %s: %+v", v.Name, v.VolumeSource)
		}
	}
}

// checkOneKey: of the Secret's values only client.key is a private key,
// and client.crt, its certificate, names the user cn.
func checkOneKey(t *testing.T, secret *corev1.Secret, cn string) {
	var keys []string
	for name, data := range secret.Data {
		if bytes.Contains(data, []byte("PRIVATE KEY")) {
			keys = append(keys, name)
		}
	}
	if !slices.Equal(keys, []string{"client.key"}) {
		t.Errorf("%s holds the private keys %v, want client.key alone", secret.Name, keys)
	}
	block, _ := pem.Decode(secret.Data["client.crt"])
	if block == nil {
		t.Fatalf("%s: client.crt is no PEM", secret.Name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || cert.Subject.CommonName != cn {
		t.Errorf("%s: client.crt is %v (%v), want common name %s", secret.Name, cert.Subject, err, cn)
	}
}
