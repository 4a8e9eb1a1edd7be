package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/internal/poll"
)

// kubeskySelector selects every workload of kubesky's manifests, in either
// topology.
const kubeskySelector = "app.kubernetes.io/name=kubesky"

// Kubectl returns a command running bin/kubectl with the cluster's
// kubeconfig inside the network namespace.
func (c Config) Kubectl(ctx context.Context, args ...string) *exec.Cmd {
	argv := append([]string{"--net=" + NetNSPath(c.NetNS), "--", c.bin("kubectl"), "--kubeconfig=" + c.Kubeconfig()}, args...)
	return exec.CommandContext(ctx, "nsenter", argv...)
}

// Deploy applies the kustomization overlay (relative to the repository:
// cluster/overlay is deploy/kubernetes with the images' pull policy set to
// Never) with `kubectl apply -k`, and waits until every kubesky Deployment
// and StatefulSet in kube-system has every replica ready.
func (c *Cluster) Deploy(ctx context.Context, overlay string) error {
	return c.step("kubesky: kubectl apply -k "+overlay, func() error {
		dir := filepath.Join(c.cfg.RepoDir, overlay)
		out, err := c.cfg.Kubectl(ctx, "apply", "-k", dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl apply -k %s: %w: %s", dir, err, out)
		}
		fmt.Fprintf(c.cfg.Out, "%s", out)
		return poll.Until(ctx, deployTimeout, c.KubeskyAvailable)
	})
}

// KubeskyAvailable is nil once every kubesky Deployment, StatefulSet and
// DaemonSet in kube-system has observed its spec and has every replica
// updated and ready (available, for a Deployment and a DaemonSet).
func (c *Cluster) KubeskyAvailable(ctx context.Context) error {
	opts := metav1.ListOptions{LabelSelector: kubeskySelector}
	deployments, err := c.Client.AppsV1().Deployments("kube-system").List(ctx, opts)
	if err != nil {
		return err
	}
	sets, err := c.Client.AppsV1().StatefulSets("kube-system").List(ctx, opts)
	if err != nil {
		return err
	}
	daemons, err := c.Client.AppsV1().DaemonSets("kube-system").List(ctx, opts)
	if err != nil {
		return err
	}
	if len(deployments.Items)+len(sets.Items)+len(daemons.Items) == 0 {
		return fmt.Errorf("no workload labelled %s in kube-system yet", kubeskySelector)
	}
	for _, d := range deployments.Items {
		want := replicas(d.Spec.Replicas)
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.AvailableReplicas != want {
			return fmt.Errorf("deployment %s: %d of %d replicas available", d.Name, d.Status.AvailableReplicas, want)
		}
	}
	for _, s := range sets.Items {
		want := replicas(s.Spec.Replicas)
		if s.Status.ObservedGeneration < s.Generation || s.Status.UpdatedReplicas != want || s.Status.ReadyReplicas != want {
			return fmt.Errorf("statefulset %s: %d of %d replicas ready", s.Name, s.Status.ReadyReplicas, want)
		}
	}
	for _, d := range daemons.Items {
		s := d.Status
		if s.ObservedGeneration < d.Generation || s.DesiredNumberScheduled == 0 || s.UpdatedNumberScheduled != s.DesiredNumberScheduled || s.NumberAvailable != s.DesiredNumberScheduled {
			return fmt.Errorf("daemonset %s: %d of %d pods available", d.Name, s.NumberAvailable, s.DesiredNumberScheduled)
		}
	}
	return nil
}

// replicas is a workload's wanted replica count (1 when unset).
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}
