// Command kubesky-cluster runs a real Kubernetes of one control plane and
// --nodes nodes with kubesky as its cluster DNS, inside network namespaces
// of its own, until Ctrl-C (see package cluster and docs/cluster.md). It
// must run as root.
//
//	kubesky-cluster up        build what is missing, start, wait for Ctrl-C, stop (--clusters 2: a clusterset)
//	kubesky-cluster clean     remove what a crashed run left (processes, cgroups, namespaces)
//	kubesky-cluster upstream  the stand-in upstream resolver (started by up, inside the namespace)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: kubesky-cluster up|clean|upstream [flags]")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fs := pflag.NewFlagSet(args[0], pflag.ContinueOnError)
	repo := fs.String("repo", ".", "the kubesky repository (deploy/, cluster/overlay, bin/)")
	dataDir := fs.String("data-dir", "", "where the cluster keeps images and state (default <repo>/.cache/cluster)")
	addr := fs.String("addr", cluster.DNSPort(cluster.DefaultConfig("").Addresses().Upstream), "upstream: the address to answer on")
	nodes := fs.Int("nodes", 1, fmt.Sprintf("up: how many nodes run pods (1 to %d)", cluster.MaxNodes))
	family := fs.String("ip-family", cluster.IPv4, "up: the cluster's one IP family, ipv4 or ipv6")
	topology := fs.String("topology", cluster.TopologyPerPod, "up: the kubesky topology deployed: per-pod, shared or node-local")
	clusters := fs.Int("clusters", 1, fmt.Sprintf("up, clean: how many clusters (1 to %d); more than one make a clusterset (IDs %s), per-pod and IPv4, whose pod ranges are routed to each other and whose kubesky shares one broker etcd", cluster.MaxMembers, strings.Join(cluster.ClustersetIDs, ", ")))
	fs.SetOutput(stderr)
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "kubesky-cluster %s: %v\n", args[0], err)
		return 2
	}
	cfg := cluster.DefaultConfig(absolute(*repo))
	if *dataDir != "" {
		cfg.DataDir = absolute(*dataDir)
	}
	cfg.Out = stdout
	cfg = cfg.WithIPFamily(*family).WithTopology(*topology)
	cfg.Nodes = *nodes
	members, err := memberConfigs(cfg, *clusters)
	if err != nil {
		fmt.Fprintf(stderr, "kubesky-cluster %s: --%v\n", args[0], err)
		return 2
	}
	switch args[0] {
	case "up":
		if len(members) > 1 {
			err = upClusterset(ctx, cfg, members, stdout)
		} else {
			err = up(ctx, cfg, stdout)
		}
	case "clean":
		err = clean(members)
	case "upstream":
		err = cluster.ServeUpstream(ctx, *addr)
	default:
		fmt.Fprintf(stderr, "kubesky-cluster: unknown command %q\n", args[0])
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubesky-cluster %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// up starts the cluster, prints how to use it, and stops it on a signal or
// when one of its processes exits.
func up(ctx context.Context, cfg cluster.Config, w io.Writer) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("must run as root (it creates a network namespace and runs a kubelet)")
	}
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Fprint(w, guide(cfg, "k"))
	return waitExit(ctx, w, c.Exited())
}

// waitExit returns nil on a signal, or the error of the first process of
// any cluster that exits.
func waitExit(ctx context.Context, w io.Writer, exited ...<-chan *kubeproc.Process) error {
	first := make(chan *kubeproc.Process, len(exited))
	for _, ch := range exited {
		go func() {
			select {
			case p := <-ch:
				first <- p
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(w, "\nstopping")
		return nil
	case p := <-first:
		return p.ExitError()
	}
}

// memberConfigs validates cfg as the lone cluster (n = 1) or as each
// member of a clusterset of n.
func memberConfigs(cfg cluster.Config, n int) ([]cluster.Config, error) {
	if n < 1 || n > cluster.MaxMembers {
		return nil, fmt.Errorf("clusters: %d is not between 1 and %d", n, cluster.MaxMembers)
	}
	if n == 1 {
		return []cluster.Config{cfg}, cfg.Validate()
	}
	return cluster.MemberConfigs(cfg, cluster.ClustersetIDs[:n])
}

func clean(members []cluster.Config) error {
	var errs []error
	for _, cfg := range members {
		errs = append(errs, cluster.Clean(cfg))
	}
	return errors.Join(errs...)
}

// upClusterset is up for a clusterset: the members and their broker.
func upClusterset(ctx context.Context, cfg cluster.Config, members []cluster.Config, w io.Writer) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("must run as root (it creates network namespaces and runs kubelets)")
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ClusterID
	}
	s, err := cluster.StartClusterset(ctx, cfg, ids)
	if err != nil {
		return err
	}
	defer s.Stop()
	for _, m := range members {
		fmt.Fprintf(w, "\n== cluster %s ==%s", m.ClusterID, guide(m, m.ClusterID))
	}
	fmt.Fprintf(w, "\nThe clusters share the broker etcd %s (docs/clusterset.md). Export a Service of %s:\n  %s create -f - <<< '{\"apiVersion\":\"multicluster.x-k8s.io/v1beta1\",\"kind\":\"ServiceExport\",\"metadata\":{\"name\":\"SVC\",\"namespace\":\"NS\"}}'\n",
		s.Broker, ids[0], ids[0])
	exited := make([]<-chan *kubeproc.Process, len(s.Members))
	for i, c := range s.Members {
		exited[i] = c.Exited()
	}
	return waitExit(ctx, w, exited...)
}

// guide says how to use the cluster, its kubectl aliased as alias.
func guide(cfg cluster.Config, alias string) string {
	kubectl := fmt.Sprintf("ip netns exec %s %s --kubeconfig %s", cfg.NetNS, filepath.Join(cfg.BinDir, "kubectl"), cfg.Kubeconfig())
	return fmt.Sprintf(`
The control plane runs inside the network namespace %[1]s, node i inside %[1]s-node-i, with
kubesky as the cluster DNS (kube-dns, %[2]s). In another terminal (as root):

  alias %[5]s='%[3]s'
  %[5]s get nodes -L topology.kubernetes.io/zone
  %[5]s get pods -A -o wide
  %[5]s run -it --rm client --image=%[4]s --image-pull-policy=Never --restart=Never -- nslookup kubernetes

Ctrl-C stops everything and removes the namespace.
`, cfg.NetNS, cfg.Addresses().ClusterDNS, kubectl, cluster.ClientImage, alias)
}

func absolute(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return abs
}
