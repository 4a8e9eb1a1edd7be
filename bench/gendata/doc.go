// Package gendata generates the benchmark's data set: N Kubernetes services
// as SkyDNS records for etcd, the same A names as a hosts file for dnsmasq,
// and a dnsperf query file.
//
// Service i is svc<i> in namespace ns<i mod namespaces> with cluster IP
// 10.96.0.0 + i + 1. Each service has two records under the zone's key
// (for zone cluster.local and prefix /skydns):
//
//	/skydns/local/cluster/svc/ns3/svc3/<label>            = {"host":"10.96.0.4"}
//	/skydns/local/cluster/svc/ns3/svc3/_tcp/_http/<label> = {"host":"svc3.ns3.svc.cluster.local.","port":80}
//
// where <label> is a short hash of the value, as kube2sky writes it.
//
// The query mix is 70 % A of an existing service, 10 % SRV of its named
// port, 10 % A of a missing name in the zone (NXDOMAIN) and 10 % AAAA of an
// existing IPv4-only name (NODATA).
package gendata
