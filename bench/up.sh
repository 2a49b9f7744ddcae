#!/usr/bin/env bash
# `dnsplane up` as the product (issue 21): how long it takes to be ready, and
# its memory (docs/operations.md, "Footprint and start-up, measured").
#
# 1. Start to ready, ROUNDS rounds of: for each node count in NODES, a cold
#    start (empty data dir: keys, certificates, etcd, every object created)
#    and then a warm one (the same data dir again). Two times per start,
#    from launching the prebuilt binary: the banner ("dnsplane is up") on
#    stdout, and `kubectl get nodes` listing every node Ready. Each start
#    then idles IDLE seconds and its memory is read (below). Medians over
#    the rounds.
# 2. Memory with a workload: one node (pod CIDR /20, so PODS pods fit),
#    idle after ready, then PODS pods bound to the node (bench/podfill
#    --node-name, Running once the node agent has given them IPs) and
#    SERVICES ClusterIP Services, each selecting PODS/SERVICES of them
#    (podfill --groups), so every Service has an EndpointSlice; once every
#    pod is Running and every endpoint is in a slice, SETTLE seconds more.
#
# Memory is of the `up` process and its children (there is one: the
# supervised etcd member, `dnsplane etcd-member`, docs/operations.md):
# VmRSS and VmHWM from /proc/PID/status, Pss from /proc/PID/smaps_rollup
# (RSS with shared pages divided among the processes that map them, so the
# two processes' shared binary pages count once), summed; and the up
# process's own VmRSS. `uptime`'s load is printed with each start: the machine
# may be shared, so compare within a run.
#
# Needs root (port 53 for the DNS addresses), kubectl and ss. Everything
# runs on the loopback addresses ADDR3 (cluster DNS) and ADDR4 (node
# caches), never the defaults; the API server on a free port.
#
#   bash bench/up.sh
#   ROUNDS=1 NODES=1 PODS=100 SERVICES=20 bash bench/up.sh   # a quick check
#   DNSPLANE=/tmp/dnsplane bash bench/up.sh                    # a prebuilt binary
set -euo pipefail

ROUNDS=${ROUNDS:-3}
NODES=${NODES:-1 3}
IDLE=${IDLE:-10}
PODS=${PODS:-1000}
SERVICES=${SERVICES:-200}
SETTLE=${SETTLE:-20}
DNS_ADDR=${DNS_ADDR:-127.0.59.10}
CACHE_ADDR=${CACHE_ADDR:-127.0.60.10}
TIMEOUT=${TIMEOUT:-300} # seconds a start may take before the script gives up

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
up_pid=""

trap 'stop_up; cleanup' EXIT
trap 'exit 130' INT TERM

script=up.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

[[ $(id -u) == 0 ]] || die "needs root: the DNS addresses are on port 53"
for t in ss kubectl; do
	command -v "$t" >/dev/null 2>&1 || die "$t is required"
done

dnsplane=$(dnsplane_binary)
log "building podfill and dnsupstream..."
(cd "$repo" && go build -o "$work/podfill" ./bench/podfill && go build -o "$work/dnsupstream" ./bench/dnsupstream)

# The node's upstream resolver, so that nothing here leaves the machine.
: >"$work/upstream.out"
: >"$work/upstream.out.err"
"$work/dnsupstream" -listen "127.0.0.1:$(free_port)" -zone example.test -a www.example.test=192.0.2.10 \
	>"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" dnsupstream)
printf 'nameserver 127.0.0.1\nsearch corp.test\n' >"$work/host-resolv.conf"

now() { date +%s.%N; }
load() { awk '{ print $1 }' /proc/loadavg; }

# tree PID: PID and its descendants.
tree() {
	local c
	echo "$1"
	for c in $(cat "/proc/$1/task/"*/children 2>/dev/null); do tree "$c"; done
}

# mem PID: "rss_kib hwm_kib pss_kib processes main_rss_kib", summed over
# PID's tree but the last (PID's own VmRSS).
mem() {
	local p rss=0 hwm=0 pss=0 n=0 v main
	main=$(awk '/^VmRSS/ { print $2 }' "/proc/$1/status")
	for p in $(tree "$1"); do
		v=$(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
		rss=$((rss + ${v:-0}))
		v=$(awk '/^VmHWM/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
		hwm=$((hwm + ${v:-0}))
		v=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
		pss=$((pss + ${v:-0}))
		n=$((n + 1))
	done
	echo "$rss $hwm $pss $n $main"
}

stop_up() {
	if [[ -n $up_pid ]]; then
		stop "$up_pid"
		up_pid=""
	fi
}

# start_up DIR NODES [EXTRA FLAGS...]: launches up over DIR and sets
# t_banner and t_nodes (seconds from launch to the banner and to every
# node Ready) and kubeconfig. up keeps running (up_pid).
start_up() {
	local dir=$1 n=$2 t0 ready
	shift 2
	local out=$work/up-$RANDOM.out
	: >"$out"
	local args=(up --data-dir "$dir" --secure-port 0 --dns-listen "$DNS_ADDR:53" --nodecache-listen "$CACHE_ADDR:53"
		--upstream "$upstream" --upstream-resolv-conf "$work/host-resolv.conf" --log-level warn)
	if ((n > 1)); then args+=(--nodes "$n"); fi
	t0=$(now)
	"$dnsplane" "${args[@]}" "$@" >"$out" 2>"$out.err" &
	up_pid=$!
	kubeconfig=""
	while [[ -z $kubeconfig ]]; do
		kubeconfig=$(sed -n 's/^  kubeconfig:  //p' "$out")
		kill -0 "$up_pid" 2>/dev/null || die "dnsplane up exited: $(cat "$out" "$out.err")"
		awk -v t0="$t0" -v now="$(now)" -v max="$TIMEOUT" 'BEGIN { exit !(now - t0 > max) }' &&
			die "dnsplane up printed no banner within $TIMEOUT s"
		[[ -n $kubeconfig ]] || sleep 0.05
	done
	t_banner=$(awk -v t0="$t0" -v now="$(now)" 'BEGIN { printf "%.2f", now - t0 }')
	while true; do
		ready=$(kubectl --kubeconfig "$kubeconfig" get nodes --no-headers 2>/dev/null | awk '$2 == "Ready"' | wc -l || true)
		((ready >= n)) && break
		kill -0 "$up_pid" 2>/dev/null || die "dnsplane up exited: $(cat "$out.err")"
		awk -v t0="$t0" -v now="$(now)" -v max="$TIMEOUT" 'BEGIN { exit !(now - t0 > max) }' &&
			die "not all $n nodes Ready within $TIMEOUT s"
		sleep 0.1
	done
	t_nodes=$(awk -v t0="$t0" -v now="$(now)" 'BEGIN { printf "%.2f", now - t0 }')
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
kib_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# --- 1. start to ready ----------------------------------------------------------

raw=$work/starts.tsv
: >"$raw"
echo "## Raw starts"
echo
echo "| round | nodes | data dir | banner s | all nodes Ready s | idle VmRSS MiB | idle Pss MiB | processes | up alone VmRSS MiB | load before |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
	for n in $NODES; do
		dir=$work/data-$round-$n
		for phase in cold warm; do
			l=$(load)
			start_up "$dir" "$n"
			sleep "$IDLE"
			read -r rss _ pss procs main < <(mem "$up_pid")
			stop_up
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$phase" "$t_banner" "$t_nodes" "$rss" "$pss" >>"$raw"
			echo "| $round | $n | $phase | $t_banner | $t_nodes | $(kib_mib "$rss") | $(kib_mib "$pss") | $procs | $(kib_mib "$main") | $l |"
			log "round $round, $n node(s), $phase: banner $t_banner s, nodes Ready $t_nodes s (load $l)"
		done
		rm -rf "$dir"
	done
done

echo
echo "## Start to ready, median of $ROUNDS (seconds from launch)"
echo
echo "| nodes | data dir | banner | all nodes Ready | idle VmRSS MiB | idle Pss MiB |"
echo "|---|---|---|---|---|---|"
for n in $NODES; do
	for phase in cold warm; do
		col() { awk -F'\t' -v n="$n" -v p="$phase" -v c="$1" '$1 == n && $2 == p { print $c }' "$raw" | median; }
		echo "| $n | $phase | $(col 3) | $(col 4) | $(kib_mib "$(col 5)") | $(kib_mib "$(col 6)") |"
	done
done

# --- 2. memory with PODS pods and SERVICES Services ----------------------------

l=$(load)
start_up "$work/data-fill" 1 --pod-cidr 10.244.0.0/20
sleep "$SETTLE"
read -r rss0 _ pss0 procs0 main0 < <(mem "$up_pid")
t0=$(now)
"$work/podfill" --kubeconfig "$kubeconfig" --namespace fill --count "$PODS" --groups "$SERVICES" --node-name dnsplane >"$work/podfill.out"
for i in $(seq 0 $((SERVICES - 1))); do
	cat <<YAML
---
apiVersion: v1
kind: Service
metadata: {name: svc-$i, namespace: fill}
spec:
  selector: {group: g$i}
  ports: [{port: 80}]
YAML
done >"$work/services.yaml"
kubectl --kubeconfig "$kubeconfig" apply -f "$work/services.yaml" >/dev/null
while (($(kubectl --kubeconfig "$kubeconfig" get pods -n fill --field-selector status.phase=Running --no-headers 2>/dev/null | wc -l) < PODS)); do
	sleep 0.5
done
t_running=$(awk -v t0="$t0" -v now="$(now)" 'BEGIN { printf "%.1f", now - t0 }')
endpoints() {
	kubectl --kubeconfig "$kubeconfig" get endpointslices -n fill -o json |
		jq '[.items[].endpoints // [] | .[] | select(.conditions.ready)] | length'
}
while (($(endpoints) < PODS)); do sleep 0.5; done
t_slices=$(awk -v t0="$t0" -v now="$(now)" 'BEGIN { printf "%.1f", now - t0 }')
slices=$(kubectl --kubeconfig "$kubeconfig" get endpointslices -n fill --no-headers | wc -l)
read -r rss1 hwm1 pss1 _ main1 < <(mem "$up_pid")
sleep "$SETTLE"
read -r rss2 hwm2 pss2 procs2 main2 < <(mem "$up_pid")
l2=$(load)
stop_up

echo
echo "## Memory of up, one node: idle, and with $PODS pods Running and $SERVICES Services ($slices EndpointSlices)"
echo
echo "From the first create: all pods Running after $t_running s, every endpoint ready in a slice after $t_slices s. Load $l at start, $l2 at the end."
echo
echo "| state | VmRSS MiB | Pss MiB | VmHWM (peak) MiB | processes | up alone VmRSS MiB |"
echo "|---|---|---|---|---|---|"
echo "| idle, $SETTLE s after ready | $(kib_mib "$rss0") | $(kib_mib "$pss0") | | $procs0 | $(kib_mib "$main0") |"
echo "| $PODS pods + $SERVICES Services, as the last endpoint became ready | $(kib_mib "$rss1") | $(kib_mib "$pss1") | $(kib_mib "$hwm1") | | $(kib_mib "$main1") |"
echo "| the same, $SETTLE s later (settled) | $(kib_mib "$rss2") | $(kib_mib "$pss2") | $(kib_mib "$hwm2") | $procs2 | $(kib_mib "$main2") |"
