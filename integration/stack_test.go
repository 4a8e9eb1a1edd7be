package integration

import (
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/integration/harness"
)

// stack is the whole pipeline: kube-apiserver (with its own etcd) and the
// EndpointSlice and namespace controllers; a separate etcd for the DNS
// records; kube2sky writing into it and skydns serving it.
type stack struct {
	api     *harness.APIServer
	kube    kubernetes.Interface
	dnsEtcd *harness.Etcd
	// etcdProxy, when the stack was started with one, stands between
	// skydns and dnsEtcd.
	etcdProxy *harness.Proxy
	kube2sky  *harness.Kube2Sky
	skydns    *harness.SkyDNS
}

// stackOptions change how startStack starts the pipeline.
type stackOptions struct {
	kube2skyArgs []string // extra kube2sky flags
	skydnsArgs   []string // extra skydns flags
	// proxySkyDNS puts a harness.Proxy between skydns and the DNS etcd.
	proxySkyDNS bool
}

// nodeName is the Node every stack has, for Pods to be bound to.
const nodeName = "node-1"

// startStack starts every part of the pipeline and waits until each is
// ready; everything stops when the test ends.
func startStack(t *testing.T, opts stackOptions) *stack {
	t.Helper()
	harness.RequireBinaries(t, "etcd", "kube-apiserver", "kube-controller-manager", "kube2sky", "skydns")
	s := &stack{}
	s.api = harness.StartAPIServer(t, harness.StartEtcd(t).Endpoint)
	s.kube = s.api.Client
	harness.StartControllerManager(t, s.api.Kubeconfig, "endpointslice", "namespace")
	harness.CreateNode(t, s.kube, nodeName)
	s.dnsEtcd = harness.StartEtcd(t)
	s.kube2sky = s.startKube2Sky(t, opts.kube2skyArgs...)
	skydnsEtcd := s.dnsEtcd.Endpoint
	if opts.proxySkyDNS {
		s.etcdProxy = harness.StartProxy(t, hostOf(s.dnsEtcd.Endpoint))
		skydnsEtcd = s.etcdProxy.URL()
	}
	s.skydns = harness.StartSkyDNS(t, skydnsEtcd, opts.skydnsArgs...)
	return s
}

// startKube2Sky starts a kube2sky replica of the stack.
func (s *stack) startKube2Sky(t *testing.T, args ...string) *harness.Kube2Sky {
	t.Helper()
	return harness.StartKube2Sky(t, s.api.Kubeconfig, s.dnsEtcd.Endpoint, args...)
}

// hostOf returns the host:port of an http:// URL.
func hostOf(url string) string {
	const scheme = "http://"
	if len(url) > len(scheme) && url[:len(scheme)] == scheme {
		return url[len(scheme):]
	}
	return url
}
