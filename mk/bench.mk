# The DNS comparison of issue 5 (bench/dns.sh, bench/cmd/benchdns): skydns
# against CoreDNS-etcd, dnsmasq and a fixed-answer miekg/dns server, a
# callgrind pass, skydns's memory and apply rate. About 8 minutes; the
# tables go to stdout and bench/results/latest.md. See docs/bench.md.

BENCH_DNS_FLAGS ?=

.PHONY: bench-dns

bench-dns: ## DNS comparison vs CoreDNS, dnsmasq, fixed-answer server (~8 min; BENCH_DNS_FLAGS=--rounds 1)
	bench/dns.sh $(BENCH_DNS_FLAGS)
