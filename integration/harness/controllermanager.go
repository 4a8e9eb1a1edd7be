package harness

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ControllerManagerStartTimeout bounds how long StartControllerManager waits
// for /healthz.
const ControllerManagerStartTimeout = 60 * time.Second

// DefaultControllers are the controllers StartControllerManager runs when
// given none: the EndpointSlice controller, which turns Services and ready
// Pods into EndpointSlices.
var DefaultControllers = []string{"endpointslice"}

// StartControllerManager runs bin/kube-controller-manager against the API
// server described by kubeconfig, with only the named controllers
// (DefaultControllers when none), no leader election, and its own
// credentials for every controller. It waits for /healthz on a free port on
// 127.0.0.1.
func StartControllerManager(t testing.TB, kubeconfig string, controllers ...string) *Process {
	t.Helper()
	RequireBinaries(t, "kube-controller-manager")
	if len(controllers) == 0 {
		controllers = DefaultControllers
	}
	port := FreePort(t)
	p := StartProcess(t, ProcessSpec{
		Name: "kube-controller-manager",
		Path: Binary("kube-controller-manager"),
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--controllers=" + strings.Join(controllers, ","),
			"--use-service-account-credentials=false",
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", port),
			"--cert-dir=" + t.TempDir(),
			"--profiling=false",
		},
	})
	waitHealthz(t, p, "https://"+HostPort(port)+"/healthz", ControllerManagerStartTimeout)
	return p
}

// waitHealthz polls url, served with a self-signed certificate, until it
// answers 200.
func waitHealthz(t testing.TB, p *Process, url string, timeout time.Duration) {
	t.Helper()
	client := &http.Client{
		Timeout: 2 * time.Second,
		// The component generated its own certificate; only liveness matters.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	err := Poll(timeout, func() error {
		if err := p.ErrIfExited(); err != nil {
			return err
		}
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s %s", url, resp.Status, body)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s not healthy: %v", p.Name(), err)
	}
}
