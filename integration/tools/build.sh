#!/usr/bin/env bash
# build.sh builds the third-party servers the end-to-end tests run
# (kube-apiserver, kube-controller-manager, etcd, etcdctl) from the versions
# pinned in this module's go.mod, into the repository's bin/ directory.
#
# It does nothing when bin/.tools.stamp holds the sha256 of the pins (go.mod,
# go.sum, the mains and this script) and every binary exists. A cold build
# takes about 8 minutes on 2 cores; later builds reuse Go's build cache.
#
# Environment: BIN overrides the output directory (default <repo>/bin).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${BIN:-$root/bin}"
stamp="$bin/.tools.stamp"
binaries=(etcd etcdctl kube-apiserver kube-controller-manager)

cd "$here"
mkdir -p "$bin"

# One build at a time: a second caller waits, then finds the stamp current.
exec 9>"$bin/.tools.lock"
flock 9

pins_sum() {
	cat go.mod go.sum build.sh cmd/*/main.go | sha256sum | cut -d' ' -f1
}

up_to_date() {
	[[ -f "$stamp" && "$(cat "$stamp")" == "$(pins_sum)" ]] || return 1
	local b
	for b in "${binaries[@]}"; do
		[[ -x "$bin/$b" ]] || return 1
	done
}

# build NAME [LDFLAGS] builds ./cmd/NAME into $bin/NAME, replacing it atomically.
build() {
	local name="$1" ldflags="${2:-}" start=$SECONDS
	CGO_ENABLED=0 go build -trimpath -buildvcs=false \
		-ldflags "-s -w $ldflags" -o "$bin/.$name.tmp" "./cmd/$name"
	mv -f "$bin/.$name.tmp" "$bin/$name"
	echo "  $name done in $((SECONDS - start))s"
}

if up_to_date; then
	echo "tools up to date in $bin"
	exit 0
fi
rm -f "$stamp"

k8s_version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
etcd_version="$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
minor="${k8s_version#v*.}"
minor="${minor%%.*}"
major="${k8s_version#v}"
major="${major%%.*}"
vpkg=k8s.io/component-base/version
k8s_ldflags="-X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor"
k8s_ldflags+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"

echo "building etcd and etcdctl $etcd_version..."
build etcd
build etcdctl
echo "building kube-apiserver $k8s_version (first build takes ~6 min on 2 cores)..."
build kube-apiserver "$k8s_ldflags"
echo "building kube-controller-manager $k8s_version (first build takes ~2 min more)..."
build kube-controller-manager "$k8s_ldflags"

pins_sum >"$stamp"
echo "tools built in $bin"
