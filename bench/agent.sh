#!/usr/bin/env bash
# The node agent (docs/agent.md, "Measured"), on 127.0.0.1 only. Needs root
# (port 53 for pods' nameservers, mount namespaces for dnsplane exec).
#
# 1. Pods to files: PODS pods bound to a node (bench/podfill --node-name)
#    against `dnsplane apiserver`, and a standalone `dnsplane agent` for
#    that node: the time from the first create to PODS resolv.conf files on
#    disk, the time to all pods Running, and the agent's RSS (VmRSS, and
#    VmHWM: the peak) once done.
# 2. Lookup latency through real glibc: `dnsplane up` with its DNS on
#    127.0.13.10:53 / 127.0.23.10:53, forwarding to bench/dnsupstream with
#    a DELAY reply delay, and one pod per policy (ClusterFirst, Custom with
#    the ClusterFirst search list, ClusterFirstWithAutopath). Inside one
#    `dnsplane exec` per pod (so its start-up is not counted), LOOKUPS
#    `getent ahosts` of distinct names, timed by date: a Service by short
#    name (cached after the first), an external name (each distinct, so
#    every one goes to the upstream) and a nonexistent name (the same).
#
# Progress goes to stderr, the tables to stdout; every process the script
# started is stopped on exit.
set -euo pipefail

PODS=${PODS:-1000}
DELAY=${DELAY:-10ms}
LOOKUPS=${LOOKUPS:-50}
QPS=${QPS:-50} # the agent's --kube-api-qps (burst twice that): kubelet's default

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM

script=agent.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

[[ $(id -u) == 0 ]] || die "needs root: pods' nameservers are on port 53, and dnsplane exec mounts"
for t in ss kubectl; do
	command -v "$t" >/dev/null 2>&1 || die "$t is required"
done

log "building dnsplane, podfill and dnsupstream..."
(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/podfill" ./bench/podfill &&
	go build -o "$work/dnsupstream" ./bench/dnsupstream)

# --- 1. pods to files ---------------------------------------------------------

: >"$work/apiserver.out"
: >"$work/apiserver.out.err"
"$work/dnsplane" apiserver --data-dir "$work/api" --secure-port 0 --bind-address 127.0.0.1 --log-level warn \
	>"$work/apiserver.out" 2>"$work/apiserver.out.err" &
pids+=($!)
kubeconfig=$(wait_line "$work/apiserver.out" 's/^kubeconfig: //p' "${pids[-1]}" "dnsplane apiserver")
log "API server up: $kubeconfig"

state=$work/agent
"$work/dnsplane" agent --kubeconfig "$kubeconfig" --node-name bench --pod-cidr 10.244.0.0/20 \
	--kube-api-qps "$QPS" --kube-api-burst $((QPS * 2)) \
	--cluster-dns 10.96.0.10 --resolv-conf "" --state-dir "$state" --log-level warn 2>"$work/agent.err" &
agent=$!
pids+=("$agent")
for _ in $(seq 300); do
	kubectl --kubeconfig "$kubeconfig" get node bench >/dev/null 2>&1 && break
	sleep 0.1
done

count_files() { find "$state/pods" -name resolv.conf 2>/dev/null | wc -l; }
start=$(date +%s.%N)
"$work/podfill" --kubeconfig "$kubeconfig" --namespace fill --count "$PODS" --node-name bench >"$work/podfill.out"
created=$(date +%s.%N)
while (($(count_files) < PODS)); do
	kill -0 "$agent" 2>/dev/null || die "agent exited: $(cat "$work/agent.err")"
	sleep 0.05
done
files=$(date +%s.%N)
while [[ $(kubectl --kubeconfig "$kubeconfig" get pods -n fill --field-selector status.phase=Running -o name | wc -l) -lt $PODS ]]; do
	sleep 0.2
done
running=$(date +%s.%N)
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$agent/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$agent/status")

echo
echo "## Pods to files ($PODS pods, agent --kube-api-qps $QPS)"
echo
echo "| creates done | all resolv.conf files on disk | all pods Running | agent RSS | agent peak RSS |"
echo "|---|---|---|---|---|"
awk -v s="$start" -v c="$created" -v f="$files" -v r="$running" -v rss="$rss" -v hwm="$hwm" 'BEGIN {
	printf "| %.2f s | %.2f s | %.2f s | %.1f MiB | %.1f MiB |\n", c - s, f - s, r - s, rss / 1024, hwm / 1024 }'
stop "$agent"

# --- 2. lookup latency through glibc ------------------------------------------

# Distinct existing external names per policy (p1…p3), so none is cached.
: >"$work/upstream.out"
: >"$work/upstream.out.err"
records=$(for p in 1 2 3; do for i in $(seq "$LOOKUPS"); do printf 'e%d-%d.example.test=192.0.2.10,' "$p" "$i"; done; done)
"$work/dnsupstream" -listen "127.0.0.1:$(free_port)" -zone example.test,corp.test -a "${records%,}" \
	-delay "$DELAY" >"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" dnsupstream)
printf 'nameserver 127.0.0.1\nsearch corp.test\n' >"$work/host-resolv.conf"
: >"$work/up.out"
: >"$work/up.out.err"
"$work/dnsplane" up --data-dir "$work/up" --secure-port 0 --dns-listen 127.0.13.10:53 --nodecache-listen 127.0.23.10:53 \
	--upstream "$upstream" --upstream-resolv-conf "$work/host-resolv.conf" --log-level warn >"$work/up.out" 2>"$work/up.out.err" &
pids+=($!)
upkc=$(wait_line "$work/up.out" 's/^  kubeconfig:  //p' "${pids[-1]}" "dnsplane up")
kubectl --kubeconfig "$upkc" create namespace bench >/dev/null
kubectl --kubeconfig "$upkc" create service clusterip svc1 -n bench --tcp=80:80 >/dev/null
for policy in ClusterFirst Custom ClusterFirstWithAutopath; do
	name=$(tr '[:upper:]' '[:lower:]' <<<"$policy")
	params=""
	if [[ $policy == Custom ]]; then
		params='  dnsParams: {custom: {search: ["$(NAMESPACE).svc.$(CLUSTER)", "svc.$(CLUSTER)", "$(CLUSTER)", "$(HOST)"], options: ["ndots:5"]}}'
	fi
	kubectl --kubeconfig "$upkc" apply -n bench -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name}
spec:
  nodeName: dnsplane
  dnsPolicy: $policy
  containers: [{name: app, image: example}]
$params
YAML
done
kubectl --kubeconfig "$upkc" wait -n bench --for=condition=Ready --timeout=60s pod --all >/dev/null

# lookups POD KIND P: mean µs per glibc lookup of LOOKUPS names of KIND
# (external names e<P>-<i>.example.test).
lookups() {
	"$work/dnsplane" exec --data-dir "$work/up" -n bench "$1" -- bash -c '
		kind=$1 n=$2 p=$3
		start=$(date +%s%N)
		for i in $(seq "$n"); do
			case $kind in
			service) getent ahosts svc1 >/dev/null ;;
			external) getent ahosts "e$p-$i.example.test" >/dev/null ;;
			nonexistent) getent ahosts "nosuch$i-$RANDOM" >/dev/null || true ;;
			esac
		done
		echo $(( ($(date +%s%N) - start) / n / 1000 ))' _ "$2" "$LOOKUPS" "$3"
}

echo
echo "## glibc lookup latency, upstream delay $DELAY (mean of $LOOKUPS, ms)"
echo
echo "| policy | Service, short name | external name (uncached) | nonexistent name (uncached) |"
echo "|---|---|---|---|"
p=0
for policy in ClusterFirst Custom ClusterFirstWithAutopath; do
	p=$((p + 1))
	name=$(tr '[:upper:]' '[:lower:]' <<<"$policy")
	row="| $policy"
	for kind in service external nonexistent; do
		us=$(lookups "$name" "$kind" "$p")
		row+=" | $(awk -v u="$us" 'BEGIN { printf "%.1f", u / 1000 }')"
	done
	echo "$row |"
done
