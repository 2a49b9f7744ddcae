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

# start_etcd DIR: a single-member etcd on free ports; sets etcd_url, etcd_pid.
# No fsync: etcd's own cost is not what is measured, and it is the same for
# every server.
start_etcd() {
	local cport pport
	cport=$(free_port)
	pport=$(free_port)
	etcd_url=http://127.0.0.1:$cport
	etcd --name bench --data-dir "$1/etcd" --listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
		--listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
		--initial-cluster "bench=http://127.0.0.1:$pport" --unsafe-no-fsync --log-level error \
		>"$1/etcd.log" 2>&1 &
	etcd_pid=$!
	pids+=("$etcd_pid")
	for _ in $(seq 300); do
		curl -sf "$etcd_url/health" >/dev/null 2>&1 && return
		kill -0 "$etcd_pid" 2>/dev/null || die "etcd exited: $(cat "$1/etcd.log")"
		sleep 0.1
	done
	die "etcd did not start"
}

# start_dnsplane BIN DIR: sets server_pid and kubeconfig.
start_dnsplane() {
	: >"$2/server.out"
	"$1" apiserver --data-dir "$2/data" --secure-port 0 --bind-address 127.0.0.1 \
		--etcd-servers "$etcd_url" --log-level warn >"$2/server.out" 2>"$2/server.out.err" &
	server_pid=$!
	pids+=("$server_pid")
	kubeconfig=$(wait_line "$2/server.out" 's/^kubeconfig: //p' "$server_pid" "dnsplane apiserver")
}

# start_kube DIR: kube-apiserver with a static admin token, no service
# account admission (no controller creates the default ServiceAccount here)
# and AlwaysAllow; sets server_pid and kubeconfig.
start_kube() {
	local port dir=$2
	port=$(free_port)
	openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
	openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
	echo "watchfan-token,admin,admin,system:masters" >"$dir/tokens.csv"
	"$KUBE_APISERVER" --etcd-servers "$etcd_url" --secure-port "$port" --bind-address 127.0.0.1 \
		--cert-dir "$dir/certs" --token-auth-file "$dir/tokens.csv" --authorization-mode AlwaysAllow \
		--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/sa.pub" \
		--service-account-signing-key-file "$dir/sa.key" --service-cluster-ip-range 10.96.0.0/12 \
		--disable-admission-plugins ServiceAccount >"$dir/server.out" 2>&1 &
	server_pid=$!
	pids+=("$server_pid")
	kubeconfig=$dir/kubeconfig
	cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kube, cluster: {server: "https://127.0.0.1:$port", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: watchfan-token}}]
contexts: [{name: kube, context: {cluster: kube, user: admin}}]
current-context: kube
EOF
	for _ in $(seq 600); do
		curl -skf -H "Authorization: Bearer watchfan-token" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return
		kill -0 "$server_pid" 2>/dev/null || die "kube-apiserver exited: $(tail -20 "$dir/server.out")"
		sleep 0.1
	done
	die "kube-apiserver not ready within 60 s"
}

# run_case NAME WATCHERS: fresh etcd and server, one watchfan run.
results=()
run_case() {
	local name=$1 n=$2 dir line
	dir=$(mktemp -d "$work/$name-$n.XXXXXX")
	start_etcd "$dir"
	case $name in
	after | before) start_dnsplane "$work/dnsplane-$name" "$dir" ;;
	kube) start_kube "$KUBE_APISERVER" "$dir" ;;
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
