#!/usr/bin/env bash
# coredns.sh installs CoreDNS into the repository's bin/ directory, as the
# reference SkyDNS-compatible reader (its etcd plugin) for interop tests and
# benchmarks. It does nothing when bin/coredns already reports the pinned
# version. A cold build takes several minutes.
#
# Environment: BIN overrides the output directory (default <repo>/bin).
set -euo pipefail

version=1.14.7
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${BIN:-$root/bin}"

# Capture first: `grep -q` in a pipeline under pipefail can fail on SIGPIPE.
installed="$("$bin/coredns" -version 2>/dev/null || true)"
if [[ "$installed" == *"CoreDNS-$version"$'\n'* || "$installed" == *"CoreDNS-$version" ]]; then
	echo "coredns $version up to date in $bin"
	exit 0
fi

mkdir -p "$bin"
echo "building coredns v$version (takes several minutes cold)..."
start=$SECONDS
# Outside any module, so the root go.mod is neither read nor changed.
cd "$(mktemp -d)"
trap 'rm -rf "$PWD"' EXIT
GOBIN="$bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install -trimpath "github.com/coredns/coredns@v$version"
echo "coredns v$version built in $((SECONDS - start))s: $("$bin/coredns" -version | head -1)"
