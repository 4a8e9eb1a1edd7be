package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/internal/poll"
)

// Kubectl returns a command running bin/kubectl with the cluster's
// kubeconfig inside the network namespace.
func (c Config) Kubectl(ctx context.Context, args ...string) *exec.Cmd {
	argv := append([]string{"--net=" + NetNSPath(c.NetNS), "--", c.bin("kubectl"), "--kubeconfig=" + c.Kubeconfig()}, args...)
	return exec.CommandContext(ctx, "nsenter", argv...)
}

// deploy applies cluster/overlay, which is deploy/kubernetes with the
// images' pull policy set to Never, and waits until the Deployment has every
// replica available.
func (c *Cluster) deploy(ctx context.Context) error {
	overlay := filepath.Join(c.cfg.RepoDir, "cluster", "overlay")
	out, err := c.cfg.Kubectl(ctx, "apply", "-k", overlay).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl apply -k %s: %w: %s", overlay, err, out)
	}
	fmt.Fprintf(c.cfg.Out, "%s", out)
	return poll.Until(ctx, deployTimeout, c.kubeskyAvailable)
}

// kubeskyAvailable is nil once every replica of the kubesky Deployment is
// updated and available.
func (c *Cluster) kubeskyAvailable(ctx context.Context) error {
	d, err := c.Client.AppsV1().Deployments("kube-system").Get(ctx, "kubesky", metav1.GetOptions{})
	if err != nil {
		return err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.AvailableReplicas != want {
		return fmt.Errorf("kubesky: %d of %d replicas available", d.Status.AvailableReplicas, want)
	}
	return nil
}
