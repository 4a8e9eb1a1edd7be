// Package corefile reads a CoreDNS Corefile, parsed with CoreDNS's own
// grammar (github.com/coredns/caddy's caddyfile), and says what kubesky
// makes of it: for every server block, directive and option a verdict —
// used (and through which skydns or kube2sky flag), ignored (and why that
// changes no answer) or refused (a plugin, option or value kubesky lacks) —
// and the flags that give the same behaviour. One refused line refuses the
// whole Corefile (Plan.Err names it with its line); nothing is half-taken.
//
// A worked example: the kubeadm Corefile's
//
//	kubernetes cluster.local in-addr.arpa ip6.arpa {
//	   pods insecure
//	   fallthrough in-addr.arpa ip6.arpa
//	   ttl 30
//	}
//	forward . /etc/resolv.conf {
//	   max_concurrent 1000
//	}
//	cache 30
//
// becomes skydns --zone=cluster.local. --pod-records=insecure
// --reverse-fallthrough=true --ttl=30 --forward-max-concurrent=1000
// --cache-size=19968 --max-ttl=30 --cache-max-negative-ttl=30s, and
// kube2sky --zone=cluster.local --pod-records=insecure --ttl=30; /etc/resolv.conf
// is skydns's default upstream already. A server block for another zone
// that forwards (consul.local { forward . 10.150.0.1 }) becomes a stub
// domain, --stub-domain=consul.local=10.150.0.1; one that forwards the
// cluster domain or a reverse zone (NodeLocal DNSCache's) is answered by
// skydns itself. Inline hosts entries become hosts-file text (Plan.Hosts)
// for kube2sky's --hosts-configmap, under one --hosts-domain.
//
// Where the Corefile is silent and CoreDNS's behaviour differs from
// kubesky's default, the flag is set to CoreDNS's (Setting.Line 0): no
// loadbalance is --rotate=false, no cache --cache-size=0, no forward
// --allow-recursion= (nothing forwarded), a kubernetes plugin without ttl
// --ttl=5 and without fallthrough --reverse-fallthrough=false.
package corefile
