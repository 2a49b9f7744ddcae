#!/usr/bin/env bash
# Watch fan-out: what an API server pays per pod event while WATCHERS node
# agents each watch their own node's pods (fieldSelector spec.nodeName=node-i)
# and PODS pods are created round-robin over those nodes. Compares, on the
# same external etcd (a fresh one per run):
#
#   after   dnsplane apiserver built from this tree (one etcd watch per resource, fanned out)
#   before  dnsplane apiserver built from BASE (default: main), if BASE is not empty
#   kube    kube-apiserver from KUBE_APISERVER, if set (build it once from the module:
#           a scratch module with our go.mod, `go build k8s.io/kubernetes/cmd/kube-apiserver`)
#
# Each server runs twice, with 0 and with WATCHERS watches, on a fresh etcd;
# bench/watchfan reports the server's CPU seconds and RSS around the creates.
# The 0-watcher run is the cost of the creates alone, so
# (cpu[WATCHERS] - cpu[0]) / PODS is the fan-out's CPU per pod event.
#
#   bench/watchfan.sh
#   AFTER_BIN=/tmp/dnsplane BEFORE_BIN=/tmp/dnsplane-main bench/watchfan.sh
#   WATCHERS=200 PODS=500 BASE= KUBE_APISERVER=/tmp/kube-apiserver bench/watchfan.sh
set -euo pipefail

WATCHERS=${WATCHERS:-1000}
PODS=${PODS:-2000}
REPEAT=${REPEAT:-1} # rounds of every case: the machine's load moves the figures
BASE=${BASE-main}
KUBE_APISERVER=${KUBE_APISERVER:-}
script=watchfan.sh

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
command -v etcd >/dev/null 2>&1 || apt_install etcd-server
command -v openssl >/dev/null 2>&1 || die "openssl is required"
command -v curl >/dev/null 2>&1 || die "curl is required"

# AFTER_BIN, BEFORE_BIN and WATCHFAN_BIN skip a build with a binary built
# before (each dnsplane build links k8s.io/kubernetes: minutes).
if [[ -n ${AFTER_BIN:-} ]]; then
	cp "$AFTER_BIN" "$work/dnsplane-after"
else
	log "building dnsplane..."
	(cd "$repo" && go build -o "$work/dnsplane-after" ./cmd/dnsplane)
fi
if [[ -n ${WATCHFAN_BIN:-} ]]; then
	cp "$WATCHFAN_BIN" "$work/watchfan"
else
	(cd "$repo" && go build -o "$work/watchfan" ./bench/watchfan)
fi
if [[ -n $BASE && -n ${BEFORE_BIN:-} ]]; then
	cp "$BEFORE_BIN" "$work/dnsplane-before"
elif [[ -n $BASE ]]; then
	log "building dnsplane at $BASE..."
	mkdir "$work/base"
	(cd "$repo" && git archive "$BASE" | tar -x -C "$work/base")
	(cd "$work/base" && go build -o "$work/dnsplane-before" ./cmd/dnsplane)
fi

# start_dnsplane BIN DIR: sets server_pid and kubeconfig.
start_dnsplane() {
	: >"$2/server.out"
	"$1" apiserver --data-dir "$2/data" --secure-port 0 --bind-address 127.0.0.1 \
		--etcd-servers "$etcd_url" --log-level warn >"$2/server.out" 2>"$2/server.out.err" &
	server_pid=$!
	pids+=("$server_pid")
	kubeconfig=$(wait_line "$2/server.out" 's/^kubeconfig: //p' "$server_pid" "dnsplane apiserver")
}

# start_watchfan_kube DIR: kube-apiserver (start_kube) with a static admin
# token, AlwaysAllow and no ServiceAccount admission (no controller creates
# the default ServiceAccount here).
start_watchfan_kube() {
	echo "watchfan-token,admin,admin,system:masters" >"$1/tokens.csv"
	start_kube "$1" "$1/tokens.csv" watchfan-token --authorization-mode AlwaysAllow \
		--disable-admission-plugins ServiceAccount
}

# run_case NAME WATCHERS: fresh etcd and server, one watchfan run.
results=()
run_case() {
	local name=$1 n=$2 dir line
	dir=$(mktemp -d "$work/$name-$n.XXXXXX")
	start_etcd "$dir"
	case $name in
	after | before) start_dnsplane "$work/dnsplane-$name" "$dir" ;;
	kube) start_watchfan_kube "$dir" ;;
	esac
	log "$name, $n watchers, $PODS pods..."
	line=$("$work/watchfan" --kubeconfig "$kubeconfig" --pid "$server_pid" --watchers "$n" --pods "$PODS")
	log "  $line"
	results+=("server=$name $line")
	stop "$server_pid"
	stop "$etcd_pid"
}

servers=(after)
[[ -n $BASE ]] && servers+=(before)
[[ -n $KUBE_APISERVER ]] && servers+=(kube)
for _ in $(seq "$REPEAT"); do
	for s in "${servers[@]}"; do
		run_case "$s" 0
		run_case "$s" "$WATCHERS"
	done
done

printf '\n%-7s %8s %6s %7s %8s %9s %12s %10s %9s %8s\n' server watchers pods events elapsed cpu_s ms_cpu/pod rss_before rss_after hwm
for r in "${results[@]}"; do
	# shellcheck disable=SC2046
	declare $(tr ' ' '\n' <<<"$r")
	printf '%-7s %8s %6s %7s %8s %9s %12s %9sM %8sM %7sM\n' "$server" "$watchers" "$pods" "$events" "$elapsed" "$cpu_s" \
		"$cpu_ms_per_pod" "$rss_before_mib" "$rss_after_mib" "$hwm_mib"
done
echo
echo "fan-out CPU per pod event = (ms_cpu/pod with $WATCHERS watchers) - (ms_cpu/pod with 0)"
