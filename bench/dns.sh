#!/usr/bin/env bash
# dns.sh runs the DNS comparison (skydns, also signed and asked with the
# DO bit; CoreDNS's etcd plugin with and without cache, dnsmasq, a
# fixed-answer skydns/dnsserver, Knot DNS, NSD and the kernel floor,
# bench/floor/floordns.c built here with gcc), its
# callgrind pass and skydns's memory pass, and prints the tables; they are
# saved in bench/results/latest.md too. `make bench-dns` runs it.
#
# It installs dnsperf, dnsmasq-base, valgrind, knot, nsd, gcc and, for the forward part
# (make bench-forward), unbound, knot-resolver and pdns-recursor with apt-get when they are
# missing, builds bin/coredns (make coredns) and, into bin/bench/, the bench
# binaries and skydns from ./cmd/skydns (not stripped, unlike make build's,
# so callgrind can attribute instructions to source files; stripping does
# not change what runs); etcd is bin/etcd (make tools) or, when that is
# missing, built alone into bin/bench/etcd.
#
# Arguments go to benchdns: bench/dns.sh --rounds 1 --duration 3s
# Environment: SERVER_CPU (default 0) and LOAD_CPU (default 1) pick the CPUs;
# SKYDNS_TAGS are build tags for skydns (noembed: without the embedded etcd).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
server_cpu="${SERVER_CPU:-0}"
load_cpu="${LOAD_CPU:-1}"

install_missing() {
	local missing=() sudo=()
	command -v dnsperf >/dev/null || missing+=(dnsperf)
	command -v dnsmasq >/dev/null || missing+=(dnsmasq-base)
	command -v valgrind >/dev/null || missing+=(valgrind)
	command -v knotd >/dev/null || missing+=(knot)
	command -v unbound >/dev/null || missing+=(unbound)
	command -v kresd >/dev/null || missing+=(knot-resolver)
	command -v pdns_recursor >/dev/null || missing+=(pdns-recursor)
	command -v nsd >/dev/null || missing+=(nsd)
	command -v gcc >/dev/null || missing+=(gcc)
	command -v taskset >/dev/null || missing+=(util-linux)
	((${#missing[@]})) || return 0
	[[ $(id -u) == 0 ]] || sudo=(sudo)
	echo "installing ${missing[*]}..."
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}" >/dev/null ||
		{ "${sudo[@]}" apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}" >/dev/null; }
}

# build_etcd prints the etcd binary to use, building it alone when make
# tools has not run (the full tools build takes minutes).
build_etcd() {
	if [[ -x bin/etcd ]]; then
		echo bin/etcd
		return
	fi
	(cd integration/tools && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags '-s -w' -o ../../bin/bench/etcd ./cmd/etcd) >&2
	echo bin/bench/etcd
}

if (($(nproc --all) < 2)); then
	echo "dns.sh: this machine has $(nproc --all) CPU; the comparison pins the server and the load to two different CPUs" >&2
	exit 1
fi
install_missing
make --no-print-directory coredns >/dev/null
mkdir -p bin/bench
version="$(git describe --tags --always --dirty 2>/dev/null || echo dev)"
CGO_ENABLED=0 go build -trimpath -tags "${SKYDNS_TAGS:-}" -ldflags "-X github.com/kubesky/kubesky/internal/version.Version=$version" -o bin/bench/ ./bench/cmd/... ./cmd/skydns
gcc -O2 -Wall -o bin/bench/floordns bench/floor/floordns.c
etcd="$(build_etcd)"
# The driver shares the load CPU with dnsperf, never the server's.
exec taskset -c "$load_cpu" bin/bench/benchdns --skydns bin/bench/skydns --etcd "$etcd" \
	--server-cpu "$server_cpu" --load-cpu "$load_cpu" "$@"
