package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/poll"
)

// component is one server of the demo: how to start it and how to tell it
// is ready.
type component struct {
	name    string
	binary  string
	args    []string
	summary string // printed once it is ready
	ready   func(ctx context.Context) error
}

// components are the demo's servers in start order; the API server's
// files must have been written to p.pki.
func (c runConfig) components(p paths) []component {
	return []component{c.skydns(p), c.apiEtcd(p), c.apiserver(p), c.kube2sky(p)}
}

func (c runConfig) skydns(p paths) component {
	return component{
		name:   "skydns",
		binary: "skydns",
		args: []string{
			"--dns-addr=" + c.dnsAddr,
			"--http-addr=" + c.skydnsHTTPAddr,
			"--zone=" + c.zone,
			"--etcd-data-dir=" + p.skydnsEtcd,
			"--embedded-etcd-addr=" + c.skydnsEtcdAddr,
			// No Service drains the demo's skydns: Ctrl-C, which stops it
			// with SIGTERM, should not wait for a lameduck.
			"--lameduck=0s",
		},
		summary: fmt.Sprintf("DNS on %s (UDP, TCP), records in its embedded etcd at http://%s", c.dnsAddr, c.skydnsEtcdAddr),
		ready:   func(ctx context.Context) error { return httpOK(ctx, "http://"+c.skydnsHTTPAddr+"/readyz", "") },
	}
}

func (c runConfig) apiEtcd(p paths) component {
	client, peer := "http://"+c.apiEtcdAddr, "http://"+c.apiEtcdPeerAddr
	return component{
		name:   "etcd",
		binary: "etcd",
		args: []string{
			"--name=demo",
			"--data-dir=" + p.apiEtcd,
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=demo=" + peer,
			"--log-level=warn",
		},
		summary: "the API server's storage at " + client,
		ready:   func(ctx context.Context) error { return httpOK(ctx, client+"/health", "") },
	}
}

func (c runConfig) apiserver(p paths) component {
	files := kubeproc.APIServerFilesIn(p.pki)
	url := "https://" + c.apiserverAddr()
	return component{
		name:    "kube-apiserver",
		binary:  "kube-apiserver",
		args:    kubeproc.LocalAPIServerArgs(c.apiserverPort, "http://"+c.apiEtcdAddr, files),
		summary: fmt.Sprintf("%s, kubeconfig %s", url, p.kubeconfig),
		ready:   func(ctx context.Context) error { return apiserverReady(ctx, p.kubeconfig) },
	}
}

func (c runConfig) kube2sky(p paths) component {
	return component{
		name:   "kube2sky",
		binary: "kube2sky",
		args: []string{
			"--kubeconfig=" + p.kubeconfig,
			"--etcd-endpoints=http://" + c.skydnsEtcdAddr,
			"--zone=" + c.zone,
			"--http-addr=" + c.kube2skyHTTP,
		},
		summary: "watching the API server, writing to skydns's etcd",
		ready:   func(ctx context.Context) error { return httpOK(ctx, "http://"+c.kube2skyHTTP+"/readyz", "") },
	}
}

// apiserverReady asks the API server's /readyz with the admin kubeconfig.
func apiserverReady(ctx context.Context, kubeconfig string) error {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET /readyz: %w: %s", err, body)
	}
	return nil
}

// startComponent starts one component and waits until it is ready or has
// exited.
func startComponent(ctx context.Context, cs *kubeproc.Group, comp component, c runConfig, logs string) (time.Duration, error) {
	start := time.Now()
	ch, err := cs.Start(kubeproc.Spec{
		Name:      comp.name,
		Path:      filepath.Join(c.binDir, comp.binary),
		Args:      comp.args,
		Log:       filepath.Join(logs, comp.name+".log"),
		StartLine: fmt.Sprintf("=== kubesky-demo %s: %s %q", time.Now().Format(time.RFC3339), comp.binary, comp.args),
	})
	if err != nil {
		return 0, err
	}
	err = poll.Until(ctx, c.startTimeout, func(ctx context.Context) error {
		if err := ch.ExitError(); err != nil {
			return poll.Permanent(err)
		}
		return comp.ready(ctx)
	})
	if exitErr := ch.ExitError(); exitErr != nil {
		return 0, exitErr
	}
	if err != nil {
		return 0, fmt.Errorf("%s not ready (log: %s): %w", comp.name, ch.Log, err)
	}
	return time.Since(start), nil
}
