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
	return c.issueEtcdSecrets(ctx, false, func(secret *corev1.Secret) error {
		_, err := c.Client.CoreV1().Secrets("kube-system").Create(ctx, secret, metav1.CreateOptions{})
		return err
	})
}

// RenewEtcdSecrets issues a new key and certificate for every identity of
// the shared etcd (`kubesky-demo pki --force`) under the CAs of the first
// ones, and replaces the Secrets' data; the pods read it when restarted.
func (c *Cluster) RenewEtcdSecrets(ctx context.Context) error {
	return c.issueEtcdSecrets(ctx, true, func(secret *corev1.Secret) error {
		_, err := c.Client.CoreV1().Secrets("kube-system").Update(ctx, secret, metav1.UpdateOptions{})
		return err
	})
}

// issueEtcdSecrets runs `kubesky-demo pki` (with --force if renew) with
// the cluster's etcd CAs and hands save each Secret of deploy.EtcdSecrets.
func (c *Cluster) issueEtcdSecrets(ctx context.Context, renew bool, save func(*corev1.Secret) error) error {
	dir, err := os.MkdirTemp("", "kubesky-etcd-tls-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	caFlags, err := c.etcdCAFlags()
	if err != nil {
		return err
	}
	args := append(append([]string{"pki", "--dir", dir}, deploy.SharedEtcdPKIFlags...), caFlags...)
	if renew {
		args = append(args, "--force")
	}
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

// etcdCAFlags are pki's flags issuing with the cluster's two etcd CAs, the
// members' and the readers', made on first use in the run directory and
// kept (with their keys) so that a renewal keeps them.
func (c *Cluster) etcdCAFlags() ([]string, error) {
	var flags []string
	for _, ca := range []struct{ dir, flag string }{{"members", "--etcd-ca"}, {"readers", "--etcd-readers-ca"}} {
		dir := filepath.Join(c.cfg.paths().run, "etcd-ca", ca.dir)
		cert, key := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
		if _, err := os.Stat(key); errors.Is(err, fs.ErrNotExist) {
			if err := newCAFiles(dir, key); err != nil {
				return nil, err
			}
		}
		flags = append(flags, ca.flag+"-cert="+cert, ca.flag+"-key="+key)
	}
	return flags, nil
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
