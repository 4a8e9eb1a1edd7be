package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/poll"
)

// Timeouts of the start-up steps.
const (
	componentTimeout = 2 * time.Minute
	deployTimeout    = 3 * time.Minute
	stopGrace        = 10 * time.Second
)

// Cluster is a running cluster. Stop it with Stop.
type Cluster struct {
	cfg   Config
	files *kubeproc.APIServerFiles
	procs *kubeproc.Group
	// holders own the nodes' private mount namespaces, by node index (each
	// set once, by the goroutine starting that node's runtime).
	holders []*kubeproc.Process
	// Config reaches the API server as the admin user, from this process
	// (it dials inside the namespace).
	Config *rest.Config
	Client kubernetes.Interface
}

// Start builds what is missing, starts every component and deploys
// kubesky, printing progress to cfg.Out. On failure it stops what it
// started and returns the error.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, procs: kubeproc.NewGroup(), holders: make([]*kubeproc.Process, cfg.Nodes+1)}
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Exited receives each process of the cluster that exits.
func (c *Cluster) Exited() <-chan *kubeproc.Process { return c.procs.Exited }

// Cfg is the configuration the cluster was started with.
func (c *Cluster) Cfg() Config { return c.cfg }

func (c *Cluster) start(ctx context.Context) error {
	total := time.Now()
	if err := c.step("cleaning up after an earlier run", func() error { return Clean(c.cfg) }); err != nil {
		return err
	}
	var tars []string
	if err := c.step("images", func() (err error) { tars, err = c.cfg.buildImages(); return err }); err != nil {
		return err
	}
	if err := c.step(fmt.Sprintf("network namespaces (%s and %d nodes) and configuration", c.cfg.NetNS, c.cfg.Nodes), c.prepare); err != nil {
		return err
	}
	if err := c.startAll(ctx, c.controlPlane()); err != nil {
		return err
	}
	if err := c.startRuntimes(ctx, tars); err != nil {
		return err
	}
	comps := c.controllers()
	for _, n := range c.cfg.AllNodes() {
		comps = append(comps, c.kubeletAndProxy(n)...)
	}
	if err := c.startAll(ctx, comps); err != nil {
		return err
	}
	if c.cfg.Overlay != "" && c.cfg.needsSharedEtcd() {
		if err := c.PrepareSharedEtcd(ctx); err != nil {
			return err
		}
	}
	if c.cfg.Overlay != "" {
		if err := c.Deploy(ctx, c.cfg.Overlay); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.cfg.Out, "cluster up with %d nodes in %s\n", c.cfg.Nodes, time.Since(total).Round(time.Second))
	return nil
}

// startRuntimes starts every node's mount namespace holder and
// containerd, and imports the images into it, the nodes side by side.
func (c *Cluster) startRuntimes(ctx context.Context, tars []string) error {
	var g errgroup.Group
	for _, n := range c.cfg.AllNodes() {
		g.Go(func() error { return c.startRuntime(ctx, n, tars) })
	}
	return g.Wait()
}

// startRuntime starts node n's holder and containerd, and imports the
// images into it.
func (c *Cluster) startRuntime(ctx context.Context, n Node, tars []string) error {
	if err := c.step(n.Name+" mount namespace", func() error { return c.startHolder(n) }); err != nil {
		return err
	}
	if err := c.startAll(ctx, []component{c.containerd(n)}); err != nil {
		return err
	}
	socket := c.cfg.nodePaths(n).socket
	return c.step(fmt.Sprintf("%s: importing %d images", n.Name, len(tars)), func() error { return importImages(socket, tars) })
}

// step runs fn, printing its name and how long it took.
func (c *Cluster) step(name string, fn func() error) error {
	start := time.Now()
	fmt.Fprintf(c.cfg.Out, "%s...\n", name)
	if err := fn(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(c.cfg.Out, "  %s: done in %s\n", name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// prepare writes the PKI, the kubeconfig and the node's files, and creates
// the network namespace.
func (c *Cluster) prepare() error {
	p := c.cfg.paths()
	if err := os.RemoveAll(p.run); err != nil {
		return err
	}
	for _, dir := range []string{p.logs, p.etcd} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	c.files = kubeproc.APIServerFilesIn(p.pki)
	addr := c.cfg.Addresses().ControlPlane
	if err := c.files.Write(kubeproc.PKIOptions{ExtraNames: []string{addr}}); err != nil {
		return err
	}
	url := "https://" + net.JoinHostPort(addr, strconv.Itoa(APIPort))
	if err := c.files.WriteKubeconfig(p.kubeconfig, url); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", p.kubeconfig)
	if err != nil {
		return err
	}
	cfg.Dial = DialInNetNS(c.cfg.NetNS)
	cfg.QPS, cfg.Burst = 50, 100
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	for _, n := range c.cfg.AllNodes() {
		if err := c.cfg.writeNodeFiles(n); err != nil {
			return err
		}
		if err := createCgroupRoot(n); err != nil {
			return err
		}
	}
	return createNetworks(c.cfg)
}

// startHolder starts the process that owns node n's private mount
// namespace, in its network namespace (see holderScript).
func (c *Cluster) startHolder(n Node) error {
	holder, err := c.procs.Start(kubeproc.Spec{
		Name: n.Name + " mount-namespace-holder",
		Path: "nsenter",
		Args: []string{"--net=" + NetNSPath(n.NetNS), "--", "unshare", "--mount", "--propagation", "private",
			"sh", c.cfg.nodePaths(n).holder},
		Log: c.cfg.NodeLog(n, "holder"),
	})
	if err != nil {
		return err
	}
	c.holders[n.Index] = holder
	return poll.Until(context.Background(), 10*time.Second, func(context.Context) error {
		if err := holder.ExitError(); err != nil {
			return poll.Permanent(err)
		}
		if kubeproc.Tail(holder.Log, 1) != "holder ready" {
			return errors.New("not ready yet")
		}
		return nil
	})
}

// startAll starts the components in order, each once the one before is
// ready.
func (c *Cluster) startAll(ctx context.Context, comps []component) error {
	for _, comp := range comps {
		start := time.Now()
		fmt.Fprintf(c.cfg.Out, "%s...\n", comp.name)
		proc, err := c.procs.Start(c.spec(comp))
		if err != nil {
			return err
		}
		err = poll.Until(ctx, componentTimeout, func(ctx context.Context) error {
			if err := proc.ExitError(); err != nil {
				return poll.Permanent(err)
			}
			return comp.ready(ctx)
		})
		if err != nil {
			return fmt.Errorf("%s not ready (log %s): %w", comp.name, proc.Log, err)
		}
		fmt.Fprintf(c.cfg.Out, "  %s: ready in %s\n", comp.name, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// Stop stops every process, last started first, then removes what the node
// left: its pods' processes and cgroups, and the network namespace.
func (c *Cluster) Stop() {
	c.procs.StopAll(stopGrace, func(name string) { fmt.Fprintf(c.cfg.Out, "stopping %s\n", name) })
	if err := Clean(c.cfg); err != nil {
		fmt.Fprintf(c.cfg.Out, "cleaning up: %v\n", err)
	}
}
