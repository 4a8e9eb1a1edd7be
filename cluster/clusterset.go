package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/mcs-api/config/crd"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/poll"
	kcs "github.com/kubesky/kubesky/kube2sky/clusterset"
)

// MaxMembers bounds a clusterset: the address plans have two members.
const MaxMembers = 2

// ClustersetOverlay is the kustomization every member of a clusterset
// applies: cluster/overlay with kube2sky and skydns reading and writing
// the clusterset on the broker, each with its own credential.
var ClustersetOverlay = filepath.Join("cluster", "overlay-clusterset")

// The broker: one etcd the members share, in the first member's control
// plane namespace on its address, which every member's nodes and pods
// reach through the link between the clusters.
const (
	brokerPort = 2479
	brokerPeer = "http://127.0.0.1:2480"
	// ClustersetPrefix is the broker's key prefix of the clusterset.
	ClustersetPrefix = cs.DefaultPrefix
	// The Secrets and ConfigMap ClustersetOverlay mounts.
	writerSecret    = "kubesky-clusterset-writer"
	readerSecret    = "kubesky-clusterset-reader"
	clustersetProps = "kubesky-clusterset"
	clusterPropCRD  = "clusterproperty-crd.yaml"
)

// linkNet are the addresses of the link between the members' control
// plane namespaces: member k is linkNet.k.
const linkNet = "10.255.255"

// AsMember returns c as member k (1 to MaxMembers) of a clusterset, with
// cluster ID id: its namespaces are kubesky-<id>*, and it deploys
// ClustersetOverlay.
func (c Config) AsMember(k int, id string) Config {
	c.Member, c.ClusterID = k, id
	c.NetNS = "kubesky-" + id
	c.Overlay = ClustersetOverlay
	return c
}

// validateMember checks what a clusterset's member supports.
func (c Config) validateMember() error {
	switch {
	case !cs.ValidClusterID(c.ClusterID):
		return fmt.Errorf("cluster ID %q is not a lower-case DNS label", c.ClusterID)
	case c.Member < 1 || c.Member > MaxMembers:
		return fmt.Errorf("clusters: member %d is not between 1 and %d", c.Member, MaxMembers)
	case c.IPFamily != IPv4:
		return fmt.Errorf("ip-family: a clusterset's clusters are %s only", IPv4)
	case c.Topology != TopologyPerPod:
		return fmt.Errorf("topology: a clusterset's clusters deploy %s only", TopologyPerPod)
	}
	return nil
}

// Clusterset is clusters whose pod ranges are routed to each other and
// whose kubesky shares one broker etcd. Stop it with Stop.
type Clusterset struct {
	Members []*Cluster
	// Broker is the broker's client URL, reachable from every member's
	// namespaces.
	Broker string
	// Root reaches the broker as its root user (from this process, dialing
	// inside the first member's namespace).
	Root *clientv3.Client
	pki  string // the broker's TLS files: ca.crt, client-<user>.crt/.key
}

// ClustersetIDs are the cluster IDs `make cluster CLUSTERS=n` gives.
var ClustersetIDs = []string{"east", "west"}

// StartClusterset starts one cluster per ID from base (its node count,
// repository and data directory), joins their networks, starts the broker
// with a user per kube2sky and one for every skydns, and deploys kubesky
// in each. On failure it stops what it started.
func StartClusterset(ctx context.Context, base Config, ids []string) (*Clusterset, error) {
	if len(ids) < 1 || len(ids) > MaxMembers {
		return nil, fmt.Errorf("clusters: %d is not between 1 and %d", len(ids), MaxMembers)
	}
	s := &Clusterset{}
	if err := s.start(ctx, base, ids); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// MemberConfigs are base as each member of a clusterset of ids, validated.
func MemberConfigs(base Config, ids []string) ([]Config, error) {
	var cfgs []Config
	for i, id := range ids {
		cfg := base.AsMember(i+1, id)
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs, nil
}

func (s *Clusterset) start(ctx context.Context, base Config, ids []string) error {
	cfgs, err := MemberConfigs(base, ids)
	if err != nil {
		return err
	}
	for _, cfg := range cfgs {
		cfg.Overlay = "" // deployed below, once the broker is up
		c, err := Start(ctx, cfg)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", cfg.ClusterID, err)
		}
		s.Members = append(s.Members, c)
	}
	first := s.Members[0]
	if err := first.step("the link between the clusters' networks", func() error { return joinNetworks(cfgs) }); err != nil {
		return err
	}
	if err := s.startBroker(ctx, ids); err != nil {
		return err
	}
	for i, c := range s.Members {
		if err := s.deployMember(ctx, c, cfgs[i].Overlay); err != nil {
			return fmt.Errorf("cluster %s: %w", c.cfg.ClusterID, err)
		}
	}
	return nil
}

// Stop stops every member, the last first, and closes the root client.
func (s *Clusterset) Stop() {
	if s.Root != nil {
		_ = s.Root.Close()
	}
	for _, c := range slices.Backward(s.Members) {
		c.Stop()
	}
}

// startBroker writes the broker's TLS files, starts it among the first
// member's processes and grants the users (kubesky clusterset grant's).
func (s *Clusterset) startBroker(ctx context.Context, ids []string) error {
	first := s.Members[0]
	addr := first.cfg.Addresses().ControlPlane
	s.Broker = "https://" + net.JoinHostPort(addr, strconv.Itoa(brokerPort))
	dir := filepath.Join(first.cfg.paths().run, "broker")
	s.pki = filepath.Join(dir, "pki", "etcd")
	users := []string{"root", kcs.ReaderUser}
	for _, id := range ids {
		users = append(users, kcs.ClusterUser(id))
	}
	err := first.step("clusterset broker: TLS files", func() error {
		args := []string{"pki", "--etcd-only", "--dir", filepath.Join(dir, "pki"), "--etcd-member", "broker", "--etcd-name", addr}
		for _, u := range users {
			args = append(args, "--etcd-user", u)
		}
		return run(first.cfg.bin("kubesky-demo"), args...)
	})
	if err != nil {
		return err
	}
	broker := component{
		name: "clusterset broker etcd",
		argv: []string{first.cfg.bin("etcd"), "--name=broker", "--data-dir=" + filepath.Join(dir, "data"),
			"--listen-client-urls=" + s.Broker, "--advertise-client-urls=" + s.Broker,
			"--listen-peer-urls=" + brokerPeer, "--initial-advertise-peer-urls=" + brokerPeer,
			"--initial-cluster=broker=" + brokerPeer, "--log-level=warn",
			"--client-cert-auth", "--trusted-ca-file=" + filepath.Join(s.pki, "ca.crt"),
			"--cert-file=" + filepath.Join(s.pki, "member-broker.crt"), "--key-file=" + filepath.Join(s.pki, "member-broker.key")},
		ready: s.brokerReady,
	}
	if err := first.startAll(ctx, []component{broker}); err != nil {
		return err
	}
	return first.step("clusterset broker: users and roles", func() error {
		return kcs.Grant(ctx, s.Root, ClustersetPrefix, ids, true)
	})
}

// brokerReady opens the root client once and is nil when the broker
// answers it.
func (s *Clusterset) brokerReady(ctx context.Context) error {
	if s.Root == nil {
		cli, err := s.Client("root")
		if err != nil {
			return poll.Permanent(err)
		}
		s.Root = cli
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := s.Root.Status(sctx, s.Root.Endpoints()[0])
	return err
}

// Client is a client of the broker as user (root, kcs.ReaderUser or
// kcs.ClusterUser(id)), dialing inside the first member's namespace.
func (s *Clusterset) Client(user string) (*clientv3.Client, error) {
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = []string{s.Broker}
	opts.CAFile = filepath.Join(s.pki, "ca.crt")
	opts.CertFile = filepath.Join(s.pki, "client-"+user+".crt")
	opts.KeyFile = filepath.Join(s.pki, "client-"+user+".key")
	cfg, err := opts.Config(zap.NewNop())
	if err != nil {
		return nil, err
	}
	dial := DialInNetNS(s.Members[0].cfg.NetNS)
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		return dial(ctx, "tcp", addr)
	}))
	return clientv3.New(cfg)
}

// deployMember installs the MCS CRDs from the mcs-api module, a
// ClusterProperty CRD and the cluster's ID in it, the clusterset RBAC, the
// broker's Secrets, and then kubesky with overlay.
func (s *Clusterset) deployMember(ctx context.Context, c *Cluster, overlay string) error {
	err := c.step("Multi-Cluster Services: CRDs, ClusterProperty, RBAC, the broker's Secrets", func() error {
		clusterProperty, err := os.ReadFile(filepath.Join(c.cfg.RepoDir, overlay, clusterPropCRD))
		if err != nil {
			return err
		}
		if err := c.applyCRDs(ctx, crd.ServiceExportCRD, crd.ServiceImportCRD, clusterProperty); err != nil {
			return err
		}
		if err := c.setClusterID(ctx); err != nil {
			return err
		}
		if out, err := c.cfg.Kubectl(ctx, "apply", "-f", filepath.Join(c.cfg.RepoDir, "deploy", "optional", "rbac-clusterset.yaml")).CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl apply rbac-clusterset.yaml: %w: %s", err, out)
		}
		return s.createBrokerSecrets(ctx, c)
	})
	if err != nil {
		return err
	}
	return c.Deploy(ctx, overlay)
}

// applyCRDs applies each CRD's YAML and waits until they are
// established.
func (c *Cluster) applyCRDs(ctx context.Context, defs ...[]byte) error {
	for _, def := range defs {
		cmd := c.cfg.Kubectl(ctx, "apply", "-f", "-")
		cmd.Stdin = bytes.NewReader(def)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl apply (a CRD): %w: %s", err, out)
		}
	}
	out, err := c.cfg.Kubectl(ctx, "wait", "--for=condition=established", "--timeout=60s",
		"crd/serviceexports.multicluster.x-k8s.io", "crd/serviceimports.multicluster.x-k8s.io", "crd/clusterproperties.about.k8s.io").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl wait for the CRDs: %w: %s", err, out)
	}
	return nil
}

// setClusterID creates the ClusterProperty cluster.clusterset.k8s.io
// holding the cluster's ID, which kube2sky reads.
func (c *Cluster) setClusterID(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	prop := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
		"metadata": map[string]any{"name": kcs.ClusterPropertyName},
		"spec":     map[string]any{"value": c.cfg.ClusterID},
	}}
	return poll.Until(ctx, 30*time.Second, func(ctx context.Context) error {
		_, err := dyn.Resource(kcs.ClusterProperties).Create(ctx, prop, metav1.CreateOptions{})
		return err
	})
}

// createBrokerSecrets makes the two Secrets ClustersetOverlay mounts, each
// with the CA and one client certificate: the cluster's kube2sky user for
// kube2sky, the readers' for skydns; and the ConfigMap giving skydns the
// cluster ID.
func (s *Clusterset) createBrokerSecrets(ctx context.Context, c *Cluster) error {
	for name, user := range map[string]string{writerSecret: kcs.ClusterUser(c.cfg.ClusterID), readerSecret: kcs.ReaderUser} {
		data := map[string][]byte{}
		for key, file := range map[string]string{"ca.crt": "ca.crt", "tls.crt": "client-" + user + ".crt", "tls.key": "client-" + user + ".key"} {
			b, err := os.ReadFile(filepath.Join(s.pki, file))
			if err != nil {
				return err
			}
			data[key] = b
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Data: data}
		if _, err := c.Client.CoreV1().Secrets("kube-system").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: clustersetProps, Namespace: "kube-system"},
		Data: map[string]string{"cluster-id": c.cfg.ClusterID, "broker": s.Broker}}
	_, err := c.Client.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{})
	return err
}

// joinNetworks joins the members' control plane namespaces by veths and
// routes every member's node and pod ranges to every other's: through the
// link between the control planes, and from each node through its own
// control plane, which forwards.
func joinNetworks(cfgs []Config) error {
	var steps [][]string
	for i, a := range cfgs {
		steps = append(steps, []string{"netns", "exec", a.NetNS, "sysctl", "-qw", "net.ipv4.ip_forward=1"})
		for _, b := range cfgs[i+1:] {
			steps = append(steps, linkSteps(a, b)...)
		}
		for _, b := range cfgs {
			if b.ClusterID != a.ClusterID {
				steps = append(steps, routeSteps(a, b)...)
			}
		}
	}
	for _, step := range steps {
		if err := run("ip", step...); err != nil {
			return err
		}
	}
	return nil
}

// linkSteps make the veth pair between a's and b's control planes.
func linkSteps(a, b Config) [][]string {
	toB, toA := "cs-"+b.ClusterID, "cs-"+a.ClusterID
	return [][]string{
		{"-n", a.NetNS, "link", "add", toB, "type", "veth", "peer", "name", toA, "netns", b.NetNS},
		{"-n", a.NetNS, "addr", "add", linkAddr(a) + "/32", "peer", linkAddr(b), "dev", toB},
		{"-n", b.NetNS, "addr", "add", linkAddr(b) + "/32", "peer", linkAddr(a), "dev", toA},
		{"-n", a.NetNS, "link", "set", toB, "up"},
		{"-n", b.NetNS, "link", "set", toA, "up"},
	}
}

// routeSteps route b's node and pod ranges from a's control plane over
// the link, and from each of a's nodes through a's control plane.
func routeSteps(a, b Config) [][]string {
	var steps [][]string
	ranges := []string{b.Addresses().nodeSubnet(), b.Addresses().ClusterCIDR}
	for _, r := range ranges {
		steps = append(steps, []string{"-n", a.NetNS, "route", "add", r, "via", linkAddr(b)})
		for _, n := range a.AllNodes() {
			steps = append(steps, []string{"-n", n.NetNS, "route", "add", r, "via", a.Addresses().ControlPlane})
		}
	}
	return steps
}

// linkAddr is member c's address on the links between control planes.
func linkAddr(c Config) string { return fmt.Sprintf("%s.%d", linkNet, c.Member) }
