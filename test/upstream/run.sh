#!/usr/bin/env bash
# Builds the real kube-controller-manager and kube-scheduler from the
# k8s.io/kubernetes version in dnsplane's go.mod and runs
# TestUpstreamControllers against a bare `dnsplane apiserver`
# (test/upstream/doc.go, docs/development.md).
#
# The binaries are built in a scratch module that starts from dnsplane's
# go.mod and go.sum (same versions, same replace directives) with the two
# commands as `tool` dependencies; `go mod tidy` there adds the modules they
# need and dnsplane does not (about 33: cel-go's parser, cadvisor, the CSI
# spec, konnectivity, ...). A cold build takes about 11 minutes and 3 GB
# on 2 cores; the binaries are kept per Kubernetes version and reused.
#
#   bash test/upstream/run.sh
#   BIN=/tmp/upstream-bin bash test/upstream/run.sh     # where to build and keep them
#   BUILD_ONLY=1 bash test/upstream/run.sh              # build, do not run
#   LOGS=/tmp/logs bash test/upstream/run.sh            # keep the children's logs there
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(cd "$root" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
BIN=${BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/dnsplane-upstream/$version}
mod=$BIN/mod

build() {
	mkdir -p "$mod"
	cp "$root/go.mod" "$root/go.sum" "$mod/"
	sed -i '1s#.*#module dnsplane.test/upstreambins#' "$mod/go.mod"
	printf '\ntool (\n\tk8s.io/kubernetes/cmd/kube-controller-manager\n\tk8s.io/kubernetes/cmd/kube-scheduler\n)\n' >>"$mod/go.mod"
	(cd "$mod" && go mod tidy)
	echo "building kube-controller-manager and kube-scheduler $version into $BIN (about 11 minutes cold)" >&2
	# The version upstream's release build stamps (hack/lib/version.sh), so
	# --version and the logs name it.
	(cd "$mod" && go build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=$version" \
		-o "$BIN/" k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
}

if [[ ! -x $BIN/kube-controller-manager || ! -x $BIN/kube-scheduler || $root/go.mod -nt $BIN/kube-controller-manager ||
	$("$BIN/kube-controller-manager" --version) != "Kubernetes $version" ]]; then
	build
fi
"$BIN/kube-controller-manager" --version >&2
if [[ ${BUILD_ONLY:-0} == 1 ]]; then
	exit 0
fi
cd "$root"
logs=${LOGS:-$(mktemp -d -t dnsplane-upstream-logs.XXXXXX)}
mkdir -p "$logs"
echo "full logs of the run: $logs" >&2
DNSPLANE_UPSTREAM_CONTROLLERS=1 DNSPLANE_UPSTREAM_BIN=$BIN DNSPLANE_UPSTREAM_LOGS=$logs \
	go test -count=1 -v -timeout 20m -run "${RUN:-TestUpstreamControllers}" ./test/upstream/
