package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := defaultRunConfig()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	c.addFlags(fs)
	summary := "Starts skydns (with its embedded etcd), an etcd and a kube-apiserver, and kube2sky;\n" +
		"applies the examples; prints the records and DNS answers; stays up until Ctrl-C."
	if code, exit := parseFlags(fs, args, summary, stdout, stderr); exit {
		return code
	}
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo: %v\n", err)
		return 2
	}
	if err := runDemo(ctx, c, stdout); err != nil {
		fmt.Fprintf(stderr, "\nkubesky-demo: %v\n", err)
		return 1
	}
	return 0
}

// runDemo starts everything, shows the results, waits for ctx to end (or
// a server to die), and stops every server it started, whatever happened.
func runDemo(ctx context.Context, c runConfig, w io.Writer) (err error) {
	p := c.paths()
	if err := prepare(c, p); err != nil {
		return err
	}
	fmt.Fprintf(w, "kubesky demo: data in %s, logs in %s\n\n", p.root, p.logs)
	cs := kubeproc.NewGroup()
	defer func() {
		stopEverything(cs, w, err != nil)
		fmt.Fprint(w, dataNotice(p))
	}()
	if err := startAll(ctx, cs, c, p, w); err != nil {
		return err
	}
	if err := applyAndShow(ctx, c, p, w); err != nil {
		return err
	}
	fmt.Fprint(w, guide(c, p))
	if c.once {
		return nil
	}
	return waitForStop(ctx, cs, w)
}

// sampleService is a Service the guide suggests applying by hand.
const sampleService = `# Apply it with: kubesky-demo apply --kubeconfig <data-dir>/pki/kubeconfig -f <this file>
apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: default
spec:
  selector:
    app: api
  ports:
    - name: http
      port: 8080
`

// prepare makes the data directories, writes fresh certificates and the
// sample Service.
func prepare(c runConfig, p paths) error {
	for _, dir := range []string{p.logs, p.skydnsEtcd, p.apiEtcd} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(p.sample, []byte(sampleService), 0o644); err != nil {
		return err
	}
	_, err := writePKI(pkiConfig{
		dir: p.pki, server: "https://" + c.apiserverAddr(), validity: 365 * 24 * time.Hour, force: true,
	})
	return err
}

// startAll starts the components one after the other, each once the one
// before is ready.
func startAll(ctx context.Context, cs *kubeproc.Group, c runConfig, p paths, w io.Writer) error {
	comps := c.components(p)
	for i, comp := range comps {
		fmt.Fprintf(w, "[%d/%d] starting %s ... ", i+1, len(comps)+2, comp.name)
		took, err := startComponent(ctx, cs, comp, c, p.logs)
		if err != nil {
			fmt.Fprintln(w, "failed")
			return err
		}
		fmt.Fprintf(w, "ready in %.1fs: %s\n", took.Seconds(), comp.summary)
	}
	return nil
}

// applyAndShow applies the examples and prints what they became.
func applyAndShow(ctx context.Context, c runConfig, p paths, w io.Writer) error {
	fmt.Fprintf(w, "[5/6] applying deploy/examples with server-side apply (no kubectl needed)\n")
	cfg, err := restConfig(p.kubeconfig)
	if err != nil {
		return err
	}
	objs, err := loadObjects(nil)
	if err != nil {
		return err
	}
	if err := applyObjects(ctx, cfg, objs, c.startTimeout, w); err != nil {
		return err
	}
	fmt.Fprintf(w, "[6/6] waiting until skydns answers for them\n")
	show := defaultShowConfig()
	show.etcdEndpoints = []string{"http://" + c.skydnsEtcdAddr}
	show.dnsAddr, show.zone, show.wait = c.dnsAddr, c.zone, c.startTimeout
	return show.run(ctx, w)
}

// waitForStop blocks until ctx ends (Ctrl-C) or a server exits on its own.
func waitForStop(ctx context.Context, cs *kubeproc.Group, w io.Writer) error {
	fmt.Fprintf(w, "\nEverything is up. Press Ctrl-C to stop.\n")
	select {
	case <-ctx.Done():
		return nil
	case ch := <-cs.Exited:
		return ch.ExitError()
	}
}

// stopEverything stops the servers in reverse order; a second Ctrl-C (the
// default signal handling is back by then) kills the demo and, through
// the parent-death signal, every server at once.
// stopGrace is how long a child has to exit after SIGTERM before SIGKILL.
const stopGrace = 15 * time.Second

func stopEverything(cs *kubeproc.Group, w io.Writer, failed bool) {
	fmt.Fprintln(w)
	if failed {
		fmt.Fprintf(w, "stopping everything that was started\n")
	}
	cs.StopAll(stopGrace, func(name string) { fmt.Fprintf(w, "stopping %s\n", name) })
}
