package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// APIServerStartTimeout bounds how long StartAPIServer waits for /readyz.
const APIServerStartTimeout = 90 * time.Second

// APIServer is a kube-apiserver started by StartAPIServer.
type APIServer struct {
	URL        string       // https://127.0.0.1:<port>
	Kubeconfig string       // a kubeconfig file for kubeproc.AdminUser
	CAFile     string       // the CA that signed the serving certificate
	Token      string       // kubeproc.AdminUser's bearer token
	Config     *rest.Config // kubeproc.AdminUser's client configuration
	Client     *kubernetes.Clientset
	Process    *Process
}

// StartAPIServer runs bin/kube-apiserver on a free port on 127.0.0.1, storing
// into etcdEndpoint, with RBAC, a static admin token, fresh certificates and
// service-account keys. It waits for /readyz and returns the server with a
// kubeconfig file and a clientset for the admin user.
//
// Admission: the ServiceAccount plugin is disabled, so Pods can be created
// without a ServiceAccount controller. The endpoint reconciler is off (the
// API rejects loopback endpoint addresses); the `kubernetes` Service exists
// without endpoints.
func StartAPIServer(t testing.TB, etcdEndpoint string) *APIServer {
	t.Helper()
	RequireBinaries(t, "kube-apiserver")
	dir := t.TempDir()
	files := kubeproc.APIServerFilesIn(dir)
	if err := files.Write(kubeproc.PKIOptions{}); err != nil {
		t.Fatalf("kube-apiserver files: %v", err)
	}
	s := &APIServer{CAFile: files.CAFile, Token: files.Token}
	port := FreePort(t)
	s.URL = "https://" + HostPort(port)
	s.Process = StartProcess(t, ProcessSpec{
		Name: "kube-apiserver",
		Path: Binary("kube-apiserver"),
		Args: kubeproc.LocalAPIServerArgs(port, etcdEndpoint, files),
	})
	s.Config = &rest.Config{
		Host:            s.URL,
		BearerToken:     s.Token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile},
		QPS:             100,
		Burst:           200,
	}
	s.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := files.WriteKubeconfig(s.Kubeconfig, s.URL); err != nil {
		t.Fatalf("writing kubeconfig: %v", err)
	}
	var err error
	if s.Client, err = kubernetes.NewForConfig(s.Config); err != nil {
		t.Fatalf("clientset: %v", err)
	}
	s.waitReady(t)
	return s
}

// waitReady polls /readyz until it answers ok.
func (s *APIServer) waitReady(t testing.TB) {
	t.Helper()
	err := Poll(APIServerStartTimeout, func() error {
		if err := s.Process.ErrIfExited(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.Ready(ctx)
	})
	if err != nil {
		t.Fatalf("kube-apiserver at %s not ready: %v", s.URL, err)
	}
}

// Restart stops the API server gracefully and starts it again on the same
// port with the same files and storage, waiting for /readyz.
func (s *APIServer) Restart(t testing.TB) {
	t.Helper()
	s.Process.Stop()
	s.Process.Start()
	s.waitReady(t)
}

// Ready returns nil when /readyz answers ok.
func (s *APIServer) Ready(ctx context.Context) error {
	body, err := s.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET /readyz: %w: %s", err, body)
	}
	return nil
}
