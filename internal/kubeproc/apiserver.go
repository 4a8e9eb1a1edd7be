package kubeproc

import (
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AdminUser is the token-file user every kubeconfig written here
// authenticates as; it is in system:masters.
const AdminUser = "admin"

// LoopbackServiceCIDRs is the --service-cluster-ip-range of an API server on
// loopback: dual-stack, so the `kubernetes` Service gets 10.96.0.1.
const LoopbackServiceCIDRs = "10.96.0.0/16,fd00:10:96::/112"

// APIServer is where a kube-apiserver listens and what it stores into.
type APIServer struct {
	Port         int
	Bind         string // --bind-address
	Advertise    string // --advertise-address
	EtcdEndpoint string
	ServiceCIDRs string // --service-cluster-ip-range
	Files        *APIServerFiles
}

// Args is the command line common to every API server here: RBAC, the
// static admin token, service-account tokens signed with the files' key, no
// API priority and fairness (one client, no need), no profiling.
func (a APIServer) Args() []string {
	args := []string{
		"--etcd-servers=" + a.EtcdEndpoint,
		"--bind-address=" + a.Bind,
		"--advertise-address=" + a.Advertise,
		fmt.Sprintf("--secure-port=%d", a.Port),
		"--cert-dir=" + a.Files.Dir,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + a.ServiceCIDRs,
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}
	return append(args, a.Files.Args()...)
}

// LocalAPIServerArgs is the command line of a kube-apiserver serving on
// 127.0.0.1:port with the given files, storing into etcdEndpoint, for a
// control plane without nodes: LoopbackServiceCIDRs, no endpoint reconciler
// (the API rejects loopback endpoint addresses, so the `kubernetes` Service
// has none) and no ServiceAccount admission (Pods can be created without a
// ServiceAccount controller).
func LocalAPIServerArgs(port int, etcdEndpoint string, files *APIServerFiles) []string {
	a := APIServer{
		Port: port, Bind: "127.0.0.1", Advertise: "127.0.0.1",
		EtcdEndpoint: etcdEndpoint, ServiceCIDRs: LoopbackServiceCIDRs, Files: files,
	}
	return append(a.Args(), "--endpoint-reconciler-type=none", "--disable-admission-plugins=ServiceAccount")
}

// writeKubeconfig writes a kubeconfig with the CA embedded, so the file is
// usable wherever it is copied.
func writeKubeconfig(path, url, caFile, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubesky"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca}
	cfg.AuthInfos[AdminUser] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["kubesky"] = &clientcmdapi.Context{Cluster: "kubesky", AuthInfo: AdminUser}
	cfg.CurrentContext = "kubesky"
	return clientcmd.WriteToFile(*cfg, path)
}
