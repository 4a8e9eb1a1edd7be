#!/usr/bin/env bash
# build.sh builds third-party programs from the versions pinned in this
# module's go.mod into the repository's bin/ directory. It takes one set:
#
#   servers (default)  etcd, etcdctl, kube-apiserver, kube-controller-manager:
#                      what the end-to-end tests and the demo run (cold ~8 min)
#   node               kubelet, kube-proxy, kube-scheduler, kubectl and
#                      agnhost: what `make cluster` adds (cold ~4 min more)
#   conformance        e2e.test, Kubernetes' sig-network e2e suite built from
#                      ./conformance (cold ~5 min more)
#   helm               helm, the Helm CLI (helm.sh/helm/v3/cmd/helm, a tool of
#                      this module), and kubectl: what the chart's lint,
#                      template and install tests drive
#
# A set does nothing when bin/.tools-<set>.stamp holds the sha256 of the pins
# (go.mod, go.sum, the Go files and this script) and every binary exists.
# Later builds reuse Go's build cache.
#
# Environment: BIN overrides the output directory (default <repo>/bin).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${BIN:-$root/bin}"
set_name="${1:-servers}"
case "$set_name" in
servers) binaries=(etcd etcdctl kube-apiserver kube-controller-manager) ;;
node) binaries=(kubelet kube-proxy kube-scheduler kubectl agnhost) ;;
conformance) binaries=(e2e.test) ;;
helm) binaries=(helm kubectl) ;;
*)
	echo "build.sh: unknown set $set_name (want servers, node, conformance or helm)" >&2
	exit 2
	;;
esac
stamp="$bin/.tools-$set_name.stamp"

cd "$here"
mkdir -p "$bin"

# One build at a time: a second caller waits, then finds the stamp current.
exec 9>"$bin/.tools-$set_name.lock"
flock 9

pins_sum() {
	cat go.mod go.sum build.sh cmd/*/main.go conformance/*.go | sha256sum | cut -d' ' -f1
}

up_to_date() {
	[[ -f "$stamp" && "$(cat "$stamp")" == "$(pins_sum)" ]] || return 1
	local b
	for b in "${binaries[@]}"; do
		[[ -x "$bin/$b" ]] || return 1
	done
}

# build LDFLAGS PACKAGE... builds every PACKAGE (a main package; ./cmd/NAME
# for a name) into $bin/, in one go build: the linker of one runs while
# the compiler works on the others. Each binary replaces its old one
# atomically. -X flags for a package a binary does not link are ignored.
build() {
	local ldflags="$1" start=$SECONDS tmp pkg name
	shift
	tmp="$(mktemp -d "$bin/.build.XXXXXX")"
	CGO_ENABLED=0 go build -trimpath -buildvcs=false \
		-ldflags "-s -w $ldflags" -o "$tmp/" "$@"
	for pkg in "$@"; do
		name="${pkg##*/}"
		mv -f "$tmp/$name" "$bin/$name"
	done
	rmdir "$tmp"
	echo "  ${*##*/} done in $((SECONDS - start))s"
}

# build_test NAME LDFLAGS PACKAGE compiles PACKAGE's tests into $bin/NAME.
build_test() {
	local name="$1" ldflags="$2" pkg="$3" start=$SECONDS
	CGO_ENABLED=0 go test -c -trimpath -buildvcs=false \
		-ldflags "-s -w $ldflags" -o "$bin/.$name.tmp" "$pkg"
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

case "$set_name" in
servers)
	echo "building etcd and etcdctl $etcd_version, kube-apiserver and kube-controller-manager $k8s_version (first build takes ~8 min on 2 cores)..."
	build "$k8s_ldflags" ./cmd/etcd ./cmd/etcdctl ./cmd/kube-apiserver ./cmd/kube-controller-manager
	;;
node)
	echo "building kubelet, kube-proxy, kube-scheduler, kubectl and agnhost $k8s_version..."
	build "$k8s_ldflags" ./cmd/kubelet ./cmd/kube-proxy ./cmd/kube-scheduler ./cmd/kubectl \
		k8s.io/kubernetes/test/images/agnhost
	;;
conformance)
	echo "building the e2e suite's sig-network tests $k8s_version (first build takes minutes)..."
	build_test e2e.test "$k8s_ldflags" ./conformance
	;;
helm)
	helm_version="$(go list -m -f '{{.Version}}' helm.sh/helm/v3)"
	echo "building helm $helm_version..."
	build "-X helm.sh/helm/v3/internal/version.version=$helm_version $k8s_ldflags" \
		helm.sh/helm/v3/cmd/helm ./cmd/kubectl
	;;
esac

pins_sum >"$stamp"
echo "tools built in $bin"
