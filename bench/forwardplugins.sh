#!/usr/bin/env bash
# What N forward plugins cost, for the bound on spec.pluginConfig.forwardPlugins
# (docs/dns-operator.md, "Size limits"). For each N in COUNTS:
#
# 1. the Corefile's size;
# 2. the dry load the operator runs before it publishes (`dnsplane
#    corefile-check`, the Corefile on stdin): wall time and peak RSS
#    (/usr/bin/time);
# 3. `dnsplane dns --conf` serving it: the time from exec to /ready, and
#    VmRSS and goroutines 1 s later (idle: no query is sent).
#
# The Corefile is the operator's: `dnsplane corefile` renders a DNS with one
# forward plugin of NAMESERVERS nameservers (IPv4 loopback addresses on ports
# nothing listens on: the forward plugin connects only when queried) and the
# `.` zone's upstream on 127.0.0.1, its kubernetes plugin reading a `dnsplane
# apiserver` (embedded etcd, temp data dir); that forward plugin's block is
# then repeated N times with the domains fwdI.example, so that N may exceed the
# API's bound. The server runs with GOMAXPROCS=1 pinned to SERVER_CPU.
#
#   bash bench/forwardplugins.sh
#   COUNTS="0 100 150 500 1000" bash bench/forwardplugins.sh
set -euo pipefail
shopt -s inherit_errexit

COUNTS=${COUNTS:-"0 100 150 500 1000"}
NAMESERVERS=${NAMESERVERS:-15}
SERVER_CPU=${SERVER_CPU:-0}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
server_pid=

trap cleanup EXIT
trap 'exit 130' INT TERM

script=forwardplugins.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

for t in taskset curl; do command -v "$t" >/dev/null 2>&1 || die "$t is required"; done
[[ -x /usr/bin/time ]] || apt_install time

log "building dnsplane..."
(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane)

: >"$work/apiserver.out"
: >"$work/apiserver.out.err"
"$work/dnsplane" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
	--bind-address 127.0.0.1 --log-level warn >"$work/apiserver.out" 2>"$work/apiserver.out.err" &
pids+=($!)
kubeconfig=$(wait_line "$work/apiserver.out" 's/^kubeconfig: //p' "${pids[-1]}" "dnsplane apiserver")

port=$(free_port)
health_port=$(free_port)
ready_port=$(free_port)
metrics_port=$(free_port)
{
	echo "apiVersion: operator.dnsplane.io/v1"
	echo "kind: DNS"
	echo "metadata: {name: default}"
	echo "spec:"
	echo "  pluginConfig:"
	echo "    forwardPlugins:"
	echo "    - domain: fwd.example"
	echo "      nameServers:"
	for i in $(seq "$NAMESERVERS"); do echo "      - \"127.0.1.$i:$(free_port)\""; done
	echo "  upstreamResolvers:"
	echo "    upstreams: [{type: Network, address: 127.0.0.1, port: $(free_port)}]"
} >"$work/dns.yaml"
"$work/dnsplane" corefile -f "$work/dns.yaml" --listen "127.0.0.1:$port" --kubeconfig "$kubeconfig" \
	>"$work/one" 2>"$work/corefile.err" || die "dnsplane corefile: $(cat "$work/corefile.err")"
sed -i -e "s/^\( *health\) :8080/\1 127.0.0.1:$health_port/" \
	-e "s/^\( *ready\) :8181\$/\1 127.0.0.1:$ready_port/" \
	-e "s/^\( *prometheus\) :9153\$/\1 127.0.0.1:$metrics_port/" "$work/one"
# The forward plugin's block is the first paragraph, `.` the rest.
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1' "$work/one" >"$work/stub"
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR > 1' "$work/one" >"$work/dot"
grep -q '^fwd.example:' "$work/stub" || die "unexpected Corefile: $(cat "$work/one")"

ms() { echo $(($(date +%s%N) / 1000000)); }

printf '| forward plugins × %d nameservers | Corefile bytes | dry load: time | dry load: peak RSS | dns: exec to ready | dns: RSS idle | dns: goroutines idle |\n' "$NAMESERVERS"
printf '|---|---|---|---|---|---|---|\n'
for n in $COUNTS; do
	cf=$work/Corefile-$n
	: >"$cf"
	for i in $(seq "$n"); do sed "s/^fwd\.example:/fwd$i.example:/" "$work/stub" >>"$cf"; done
	cat "$work/dot" >>"$cf"
	bytes=$(wc -c <"$cf")

	/usr/bin/time -f '%e %M' -o "$work/time" "$work/dnsplane" corefile-check <"$cf" 2>"$work/check.err" ||
		die "corefile-check, $n forward plugins: $(cat "$work/check.err")"
	read -r secs kb <"$work/time"

	t0=$(ms)
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$cf" --reload-interval 0 --log-level warn \
		>"$work/dns-$n.log" 2>&1 &
	server_pid=$!
	ready=
	for _ in $(seq 1200); do
		kill -0 "$server_pid" 2>/dev/null || die "dnsplane dns ($n) exited: $(cat "$work/dns-$n.log")"
		if curl -fsS -o /dev/null "http://127.0.0.1:$ready_port/ready" 2>/dev/null; then
			ready=$(($(ms) - t0))
			break
		fi
		sleep 0.05
	done
	[[ -n $ready ]] || die "dnsplane dns ($n) not ready within 60 s"
	sleep 1
	rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$server_pid/status")
	gor=$(curl -fsS "http://127.0.0.1:$metrics_port/metrics" | awk '$1 == "go_goroutines" { print $2 }')
	stop "$server_pid"
	server_pid=
	printf '| %d | %d | %.2f s | %.1f MB | %d ms | %s MB | %s |\n' "$n" "$bytes" "$secs" "$(echo "$kb / 1024" | bc -l)" "$ready" "$rss" "$gor"
done
log "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
