package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/deploy"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

// The topologies a cluster can deploy (Config.Topology).
const (
	TopologyPerPod    = "per-pod"    // deploy/kubernetes: etcd inside each kubesky pod
	TopologyShared    = "shared"     // deploy/shared-etcd: one etcd cluster, skydns replicas reading it
	TopologyNodeLocal = "node-local" // deploy/node-local: shared, plus skydns on every node reading through the relays
)

// Topologies maps each topology to the overlay that deploys it in this
// cluster (images never pulled, etcd's volumes from localClass).
var Topologies = map[string]string{
	TopologyPerPod:    filepath.Join("cluster", "overlay"),
	TopologyShared:    filepath.Join("cluster", "overlay-shared"),
	TopologyNodeLocal: filepath.Join("cluster", "overlay-node-local"),
}

// The shared etcd's volumes, which its overlays expect (its Secrets are
// deploy.EtcdSecrets).
const (
	localClass  = "kubesky-local" // the StorageClass of cluster/overlay-shared
	etcdMembers = 3
	imageUID    = 65532 // the user kubesky's images run as
)

// WithTopology returns c deploying topology: its overlay (the IPv6 one for
// per-pod in an IPv6 cluster) replaces the default.
func (c Config) WithTopology(topology string) Config {
	c.Topology = topology
	if overlay, ok := Topologies[topology]; ok && topology != TopologyPerPod {
		c.Overlay = overlay
	}
	return c
}

// clusterDNS is what the kubelets write as the pods' nameservers: with the
// node-local topology, the node's own skydns first and the kube-dns
// Service second, which a pod's resolver asks when the first does not
// answer (the node has no skydns left).
func (c Config) clusterDNS() []string {
	a := c.Addresses()
	if c.Topology == TopologyNodeLocal {
		return []string{a.NodeLocalDNS, a.ClusterDNS}
	}
	return []string{a.ClusterDNS}
}

// needsSharedEtcd reports whether the topology runs deploy/shared-etcd's
// etcd cluster, whose Secret and volumes must exist before its overlay.
func (c Config) needsSharedEtcd() bool {
	return c.Topology == TopologyShared || c.Topology == TopologyNodeLocal
}

// PrepareSharedEtcd makes what deploy/shared-etcd expects to find, as
// deploy/README.md says: a Secret per identity of the TLS files from
// `kubesky-demo pki --etcd-only`, and a local volume per member.
func (c *Cluster) PrepareSharedEtcd(ctx context.Context) error {
	return c.step("shared etcd: a TLS Secret per identity and the members' volumes", func() error {
		if err := c.createEtcdSecrets(ctx); err != nil {
			return err
		}
		return c.createLocalVolumes(ctx)
	})
}

// createEtcdSecrets writes the TLS files with `kubesky-demo pki` and makes
// the Secrets of deploy.EtcdSecrets from them.
func (c *Cluster) createEtcdSecrets(ctx context.Context) error {
	flags, err := c.etcdCAs(etcdCACurrent).issueFlags()
	if err != nil {
		return err
	}
	return c.issueEtcdSecrets(ctx, flags, func(secret *corev1.Secret) error {
		_, err := c.Client.CoreV1().Secrets("kube-system").Create(ctx, secret, metav1.CreateOptions{})
		return err
	})
}

// CAStep is one step of replacing the shared etcd's two CAs, the members'
// and the readers', each followed by a rolling restart of every pod that
// mounts their Secrets (docs/operations.md).
type CAStep int

const (
	// TrustNewCAs makes the new CAs and has every ca.crt trust the old
	// and the new, the keys renewed under the old.
	TrustNewCAs CAStep = iota
	// IssueUnderNewCAs issues every key under the new CAs, the old
	// still trusted.
	IssueUnderNewCAs
	// DropOldCAs has every ca.crt trust the new CAs alone.
	DropOldCAs
)

// ReplaceEtcdCAs takes step: it issues a new key and certificate for every
// identity of the shared etcd (`kubesky-demo pki --force`) with the step's
// CA flags and replaces the Secrets' data; the pods read it when
// restarted.
func (c *Cluster) ReplaceEtcdCAs(ctx context.Context, step CAStep) error {
	current, next := c.etcdCAs(etcdCACurrent), c.etcdCAs(etcdCANext)
	var flags []string
	var err error
	switch step {
	case TrustNewCAs:
		flags, err = current.issueFlags()
		if err == nil {
			err = next.make()
		}
		flags = append(flags, next.trustFlags()...)
	case IssueUnderNewCAs:
		flags, err = next.issueFlags()
		flags = append(flags, current.trustFlags()...)
	case DropOldCAs:
		err = next.replace(current)
		if err == nil {
			flags, err = current.issueFlags()
		}
	default:
		err = fmt.Errorf("no CA step %d", step)
	}
	if err != nil {
		return err
	}
	return c.issueEtcdSecrets(ctx, append(flags, "--force"), func(secret *corev1.Secret) error {
		_, err := c.Client.CoreV1().Secrets("kube-system").Update(ctx, secret, metav1.UpdateOptions{})
		return err
	})
}

// issueEtcdSecrets runs `kubesky-demo pki` with the shared etcd's flags
// and extra, and hands save each Secret of deploy.EtcdSecrets.
func (c *Cluster) issueEtcdSecrets(ctx context.Context, extra []string, save func(*corev1.Secret) error) error {
	dir, err := os.MkdirTemp("", "kubesky-etcd-tls-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := append(append([]string{"pki", "--dir", dir}, deploy.SharedEtcdPKIFlags...), extra...)
	if out, err := exec.CommandContext(ctx, c.cfg.bin("kubesky-demo"), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("kubesky-demo %v: %w: %s", args, err, out)
	}
	for name, files := range deploy.EtcdSecrets {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Data: map[string][]byte{}}
		for key, file := range files {
			if secret.Data[key], err = os.ReadFile(filepath.Join(dir, "etcd", file)); err != nil {
				return err
			}
		}
		if err := save(secret); err != nil {
			return err
		}
	}
	return nil
}

// The generations of the cluster's etcd CAs, directories of the run
// directory: the CAs in use, and the ones replacing them.
const (
	etcdCACurrent = "etcd-ca"
	etcdCANext    = "etcd-ca-next"
)

// etcdCAs is a directory holding the cluster's two etcd CAs, the members'
// and the readers', each with its key, so that new keys can be issued
// under them.
type etcdCAs string

func (c *Cluster) etcdCAs(generation string) etcdCAs {
	return etcdCAs(filepath.Join(c.cfg.paths().run, generation))
}

// etcdCAKinds are the two CAs: their directory and pki's flag prefix.
var etcdCAKinds = []struct{ dir, flag string }{{"members", "--etcd"}, {"readers", "--etcd-readers"}}

func (d etcdCAs) files(kind string) (cert, key string) {
	dir := filepath.Join(string(d), kind)
	return filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
}

// issueFlags are pki's flags issuing with these CAs, made first if they
// are not there yet.
func (d etcdCAs) issueFlags() ([]string, error) {
	if _, err := os.Stat(string(d)); errors.Is(err, fs.ErrNotExist) {
		if err := d.make(); err != nil {
			return nil, err
		}
	}
	var flags []string
	for _, kind := range etcdCAKinds {
		cert, key := d.files(kind.dir)
		flags = append(flags, kind.flag+"-ca-cert="+cert, kind.flag+"-ca-key="+key)
	}
	return flags, nil
}

// trustFlags are pki's flags trusting these CAs besides the issuing ones.
func (d etcdCAs) trustFlags() []string {
	var flags []string
	for _, kind := range etcdCAKinds {
		cert, _ := d.files(kind.dir)
		flags = append(flags, kind.flag+"-also-trust="+cert)
	}
	return flags
}

// make writes two new CAs, with their keys, replacing any there.
func (d etcdCAs) make() error {
	if err := os.RemoveAll(string(d)); err != nil {
		return err
	}
	for _, kind := range etcdCAKinds {
		cert, key := d.files(kind.dir)
		if err := newCAFiles(filepath.Dir(cert), key); err != nil {
			return err
		}
	}
	return nil
}

// replace moves these CAs to old's place, whose CAs are removed.
func (d etcdCAs) replace(old etcdCAs) error {
	if err := os.RemoveAll(string(old)); err != nil {
		return err
	}
	return os.Rename(string(d), string(old))
}

// newCAFiles writes a new CA's certificate (dir/ca.crt) and key.
func newCAFiles(dir, key string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := kubeproc.NewCA(dir, 365*24*time.Hour)
	if err != nil {
		return err
	}
	return ca.WriteKey(key)
}

// createLocalVolumes makes a hostPath PersistentVolume of localClass per
// etcd member, each a directory under the run directory owned by the
// images' user (hostPath volumes get no fsGroup).
func (c *Cluster) createLocalVolumes(ctx context.Context) error {
	for i := range etcdMembers {
		dir := filepath.Join(c.cfg.paths().run, "volumes", fmt.Sprintf("etcd-%d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.Chown(dir, imageUID, imageUID); err != nil {
			return err
		}
		if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, localVolume(i, dir), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func localVolume(i int, dir string) *corev1.PersistentVolume {
	dirType := corev1.HostPathDirectory
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kubesky-etcd-local-%d", i)},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              localClass,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &dirType}},
		},
	}
}
