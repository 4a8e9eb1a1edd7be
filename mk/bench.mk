# The DNS comparison (bench/dns.sh, bench/cmd/benchdns): skydns
# against CoreDNS-etcd, dnsmasq and a fixed-answer server (skydns/dnsserver), a
# callgrind pass, skydns over TCP against CoreDNS-etcd + cache and dnsmasq,
# skydns's memory and apply rate. About 10 minutes; the tables go to stdout
# and bench/results/latest.md. See docs/bench.md.

BENCH_DNS_FLAGS ?=

.PHONY: bench-dns bench-dns-tcp

bench-dns: ## DNS comparison vs CoreDNS, dnsmasq, fixed-answer server, over UDP and TCP (~10 min; BENCH_DNS_FLAGS=--rounds 1)
	bench/dns.sh $(BENCH_DNS_FLAGS)

bench-dns-tcp: ## the TCP part of bench-dns alone (~4 min); tables in bench/results/tcp.md
	bench/dns.sh --parts tcp --out bench/results/tcp.md $(BENCH_DNS_FLAGS)
