package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// guide is printed once everything runs: what to try by hand.
func guide(c runConfig, p paths) string {
	host, port, _ := net.SplitHostPort(c.dnsAddr)
	dig := fmt.Sprintf("dig @%s -p %s", host, port)
	etcdctl := fmt.Sprintf("%s --endpoints http://%s", relative(filepath.Join(c.binDir, "etcdctl")), c.skydnsEtcdAddr)
	demo := relative(filepath.Join(c.binDir, "kubesky-demo"))
	svc := "svc." + c.zone
	r := strings.NewReplacer("{dig}", dig, "{etcdctl}", etcdctl, "{demo}", demo, "{svc}", svc,
		"{kubeconfig}", p.kubeconfig, "{http}", c.skydnsHTTPAddr, "{k2s}", c.kube2skyHTTP,
		"{sample}", p.sample, "{zonekey}", contract.Key(contract.DefaultPrefix, c.zone))
	return r.Replace(`
=== Try it yourself (in another terminal)

Ask skydns; any DNS client works (dig is in bind9-dnsutils or bind-utils):
  {dig} web.default.{svc}
  {dig} +short SRV _http._tcp.web.default.{svc}
  {dig} +short -x 10.244.2.11

Read the records, and watch them change:
  {etcdctl} get --prefix {zonekey}/svc/default/
  {etcdctl} watch --prefix /skydns/

Add a record by hand: skydns serves it at once, and kube2sky leaves it alone:
  {etcdctl} put {zonekey}/svc/default/hand/x1 '{"host":"10.0.0.42"}'
  {dig} +short hand.default.{svc}

Create a Service through the API server (server-side apply, no kubectl needed), then ask for it:
  {demo} apply --kubeconfig {kubeconfig} -f {sample}
  kubectl --kubeconfig {kubeconfig} create service clusterip api --tcp=8080   # if you have kubectl
  {dig} +short api.default.{svc}

Health and metrics: curl {http}/readyz, curl {http}/metrics (skydns);
curl {k2s}/readyz, curl {k2s}/metrics (kube2sky).
`)
}

// dataNotice says where the demo's data lives once it has stopped.
func dataNotice(p paths) string {
	return fmt.Sprintf(`
Stopped. The data is kept in %s for the next run (remove it to start afresh):
  %-28s skydns's embedded etcd: the DNS records
  %-28s the API server's etcd: the Services and EndpointSlices
  %-28s certificates, admin token and kubeconfig (new on every run)
  %-28s each server's log
`, p.root, p.skydnsEtcd, p.apiEtcd, p.pki, p.logs)
}

// relative shortens path to one relative to the working directory when
// it lies below it.
func relative(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return rel
}
