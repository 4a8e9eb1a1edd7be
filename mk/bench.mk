# The DNS comparison (bench/dns.sh, bench/cmd/benchdns): skydns
# against CoreDNS-etcd, dnsmasq and a fixed-answer server (skydns/dnsserver), a
# callgrind pass, skydns over TCP (and DNS over TLS) against CoreDNS-etcd + cache and dnsmasq,
# skydns's memory and apply rate. About 10 minutes; the tables go to stdout
# and bench/results/latest.md. See docs/bench.md.

BENCH_DNS_FLAGS ?=

.PHONY: bench-dns bench-dns-tcp bench-forward

bench-dns: ## DNS comparison vs CoreDNS, dnsmasq, fixed-answer server, over UDP and TCP (~10 min; BENCH_DNS_FLAGS=--rounds 1)
	bench/dns.sh $(BENCH_DNS_FLAGS)

bench-dns-tcp: ## the TCP part of bench-dns alone (~4 min); tables in bench/results/tcp.md
	bench/dns.sh --parts tcp --out bench/results/tcp.md $(BENCH_DNS_FLAGS)

# The forwarding caches side by side, each forwarding to one Knot DNS holding an external zone
# through a relay on 127.0.0.1 (latency, outage): cache hits and their latency at half load, misses
# at +0 and +20 ms, a storm of one new name, RSS per cached name, a 60 s upstream outage, skydns's
# search path with and without --autopath. About 15 minutes. See docs/forward.md.
bench-forward: ## skydns's forwarder and cache vs Unbound, dnsmasq, CoreDNS (forward+cache, NodeLocal DNSCache), Knot Resolver, PowerDNS Recursor; bench/results/forward.md (~15 min; BENCH_DNS_FLAGS=--rounds 1)
	bench/dns.sh --parts forward --out bench/results/forward.md $(BENCH_DNS_FLAGS)

# etcd's watch fan-out to W skydns readers (bench/cmd/fanout): a 3-member etcd cluster of real
# processes, with and without etcd grpc-proxies, 10k Services of records, 100 kube2sky-shaped
# changes/s, W in-process etcdstore.ListWatchers; fan-out latency, CPU and memory of each etcd
# member and proxy, recovery from a compaction, a proxy restart and a leader change, one slow
# reader. The tables go to bench/results/fan-out.md. See docs/fan-out.md.
FANOUT_READERS ?= 100,1000,5000
FANOUT_PROXIES ?= 2
FANOUT_FLAGS   ?=

.PHONY: bench-fan-out

bench-fan-out: tools ## etcd watch fan-out to W = 100, 1,000 and 5,000 readers, with and without grpc-proxy (~45 min; FANOUT_READERS=100 ~3 min)
	$(GO) run ./bench/cmd/fanout --etcd bin/etcd --readers $(FANOUT_READERS) --proxies $(FANOUT_PROXIES) $(FANOUT_FLAGS)

# The feeding tier's CPU per node per change (bench/cmd/fanout --tiers): 1,000 readers behind two
# skydns relays sending each revision alone (--watch-batch 0), then two batching them
# (--watch-batch FANOUT_BATCH), in one run; the relays' CPU profiles go to FANOUT_PROFILES.
FANOUT_BATCH    ?= 250ms
FANOUT_PROFILES ?= /tmp/kubesky-fan-out-profiles

.PHONY: bench-fan-out-feeding

bench-fan-out-feeding: tools ## the relays' CPU per node per change at W = 1,000, each revision alone vs batched (~15 min)
	mkdir -p $(FANOUT_PROFILES)
	$(GO) run ./bench/cmd/fanout --etcd bin/etcd --readers 1000 --proxies 2 --direct=false --tiers relay,relay-batched \
		--watch-batch $(FANOUT_BATCH) --profile-dir $(FANOUT_PROFILES) --out bench/results/fan-out-feeding.md $(FANOUT_FLAGS)

# Where one node-local skydns's memory goes (bench/cmd/nodelocalmem): an embedded etcd with the
# records of NODELOCAL_SERVICES headless Services × 5 endpoints, a noembed skydns reading it with
# deploy/node-local's --fast-path-answers, every name asked once; /proc, the Go runtime's gauges
# and the heap profile by function; then CoreDNS as NodeLocal DNSCache asked the same names, side
# by side. See bench/results/node-local-memory.md.
NODELOCAL_SERVICES ?= 10000

.PHONY: bench-node-local-memory

bench-node-local-memory: coredns ## one node-local skydns's resident memory, by part, and NodeLocal DNSCache's, at NODELOCAL_SERVICES headless Services × 5 endpoints (~20 s at 10,000, ~1 min at 50,000)
	CGO_ENABLED=0 $(GO) build -trimpath -tags noembed -ldflags '-s -w' -o bin/bench/skydns-noembed ./cmd/skydns
	$(GO) run ./bench/cmd/nodelocalmem --skydns bin/bench/skydns-noembed --services $(NODELOCAL_SERVICES) --coredns bin/coredns -- --fast-path-answers=4096 --memory-limit-factor=1.25
