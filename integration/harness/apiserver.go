package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// APIServerStartTimeout bounds how long StartAPIServer waits for /readyz.
const APIServerStartTimeout = 90 * time.Second

// ServiceCIDRs is the API server's --service-cluster-ip-range: dual-stack,
// so the `kubernetes` Service gets 10.96.0.1.
const ServiceCIDRs = "10.96.0.0/16,fd00:10:96::/112"

// AdminUser is the token-file user the harness authenticates as; it is in
// system:masters.
const AdminUser = "admin"

// APIServer is a kube-apiserver started by StartAPIServer.
type APIServer struct {
	URL        string       // https://127.0.0.1:<port>
	Kubeconfig string       // a kubeconfig file for AdminUser
	CAFile     string       // the CA that signed the serving certificate
	Token      string       // AdminUser's bearer token
	Config     *rest.Config // AdminUser's client configuration
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
	files := APIServerFilesIn(dir)
	if err := files.Write(PKIOptions{}); err != nil {
		t.Fatalf("kube-apiserver files: %v", err)
	}
	s := &APIServer{CAFile: files.CAFile, Token: files.Token}
	port := FreePort(t)
	s.URL = "https://" + HostPort(port)
	s.Process = StartProcess(t, ProcessSpec{
		Name: "kube-apiserver",
		Path: Binary("kube-apiserver"),
		Args: LocalAPIServerArgs(port, etcdEndpoint, files),
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

// LocalAPIServerArgs is the command line of a kube-apiserver serving on
// 127.0.0.1:port with the given files, storing into etcdEndpoint: RBAC, the
// static admin token, ServiceCIDRs, no endpoint reconciler (see
// StartAPIServer) and no ServiceAccount admission.
func LocalAPIServerArgs(port int, etcdEndpoint string, files *APIServerFiles) []string {
	args := []string{
		"--etcd-servers=" + etcdEndpoint,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + files.Dir,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + ServiceCIDRs,
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	}
	return append(args, files.Args()...)
}

// writeKubeconfig writes a kubeconfig with the CA embedded, so the file is
// usable wherever it is copied.
func writeKubeconfig(path, url, caFile, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["harness"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca}
	cfg.AuthInfos[AdminUser] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["harness"] = &clientcmdapi.Context{Cluster: "harness", AuthInfo: AdminUser}
	cfg.CurrentContext = "harness"
	return clientcmd.WriteToFile(*cfg, path)
}

// waitReady polls /readyz until it answers ok.
func (s *APIServer) waitReady(t testing.TB) {
	t.Helper()
	rc := s.Client.Discovery().RESTClient()
	err := Poll(APIServerStartTimeout, func() error {
		if err := s.Process.ErrIfExited(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("GET /readyz: %w: %s", err, body)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("kube-apiserver at %s not ready: %v", s.URL, err)
	}
}
