#!/usr/bin/env bash
# The cluster DNS serving the DNS operator's Corefile, on 127.0.0.1 only:
#
# 1. Memory (VmRSS) and goroutines (go_goroutines from the Corefile's own
#    prometheus plugin) of `dnsplane dns --conf` serving the Corefile
#    `dnsplane corefile` renders for a DNS with 0, 10 and 50 (FORWARDERS)
#    forward plugins of NAMESERVERS nameservers each (at most 15). Measured
#    once the server is ready ("idle") and again after LOAD seconds of
#    dnsperf over one name of every forwarded domain and of `.` ("loaded").
# 2. Queries/s of a name in a forwarded domain against a name of the `.`
#    zone, both forwarded to the same upstreams, with QPS_FORWARDERS
#    forward plugins: a cached name (the same name again and again) and
#    uncached names (COLD_NAMES distinct names, each sent once).
#
# The nameservers are NAMESERVERS running bench/dnsupstream processes on
# 127.0.0.1 … 127.0.0.NAMESERVERS (a free port each): every forward plugin
# and the `.` zone's upstream resolvers (spec.upstreamResolvers, Network
# upstreams, policy Random like the forward plugins' default) name the same
# ones, so every nameserver is reachable and answers.
#
# The Corefile is the operator's (`dnsplane corefile -f dns.yaml --listen
# 127.0.0.1:PORT --kubeconfig K`) with only the health, ready and metrics
# addresses moved to free ports on 127.0.0.1. Its kubernetes plugin reads
# `dnsplane apiserver` (embedded etcd, temp data dir).
#
# The server runs with GOMAXPROCS=1 pinned to SERVER_CPU, dnsperf pinned to
# CLIENT_CPU (taskset). Progress goes to stderr, the tables to stdout; on
# exit (also on Ctrl-C or failure) every process the script started is
# stopped and the temp dir removed.
#
#   bash bench/operator.sh
#   FORWARDERS="0 10 50" DURATION=10 bash bench/operator.sh
set -euo pipefail
shopt -s inherit_errexit # command substitutions fail like the rest

FORWARDERS=${FORWARDERS:-"0 10 50"}
NAMESERVERS=${NAMESERVERS:-15}  # per forward plugin; at most 15
QPS_FORWARDERS=${QPS_FORWARDERS:-10}
DURATION=${DURATION:-5}         # seconds per dnsperf QPS run
LOAD=${LOAD:-2}                 # seconds of load before the "loaded" sample
COLD_NAMES=${COLD_NAMES:-20000} # distinct names per uncached run
CLIENTS=${CLIENTS:-4}           # dnsperf -c
OUTSTANDING=${OUTSTANDING:-100} # dnsperf -q
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()     # long-running helpers: the API server, the upstreams
server_pid= # the DNS server under test, when one runs

trap cleanup EXIT
trap 'exit 130' INT TERM

script=operator.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

((NAMESERVERS >= 1 && NAMESERVERS <= 15)) || die "NAMESERVERS must be 1 to 15"
max_fwd=$QPS_FORWARDERS
for n in $FORWARDERS; do if ((n > max_fwd)); then max_fwd=$n; fi; done
((QPS_FORWARDERS >= 1)) || die "QPS_FORWARDERS must be at least 1"

# --- tools -------------------------------------------------------------------

command -v dnsperf >/dev/null 2>&1 || apt_install dnsperf
command -v dig >/dev/null 2>&1 || apt_install dnsutils
for t in taskset ss curl; do
	command -v "$t" >/dev/null 2>&1 || die "$t is required"
done

log "building dnsplane and dnsupstream..."
(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/dnsupstream" ./bench/dnsupstream)

# --- API server and upstreams ------------------------------------------------

: >"$work/apiserver.out" # the background job opens it asynchronously
: >"$work/apiserver.out.err"
"$work/dnsplane" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
	--bind-address 127.0.0.1 --log-level warn >"$work/apiserver.out" 2>"$work/apiserver.out.err" &
pids+=($!)
kubeconfig=$(wait_line "$work/apiserver.out" 's/^kubeconfig: //p' "${pids[-1]}" "dnsplane apiserver")
log "API server up: $kubeconfig"

# Every upstream is authoritative for example.com and every forwarded
# domain fwdI.example, with the A records example.com and www.fwdI.example.
zones=example.com
records=(-a example.com=93.184.216.34)
for i in $(seq "$max_fwd"); do
	zones+=",fwd$i.example"
	records+=(-a "www.fwd$i.example=10.0.$((i / 250)).$((i % 250 + 1))")
done
nameservers=()
for i in $(seq "$NAMESERVERS"); do
	: >"$work/upstream$i.out"
	: >"$work/upstream$i.out.err"
	"$work/dnsupstream" -listen "127.0.0.$i:$(free_port)" -zone "$zones" "${records[@]}" \
		>"$work/upstream$i.out" 2>"$work/upstream$i.out.err" &
	pids+=($!)
	nameservers+=("$(wait_line "$work/upstream$i.out" 's/^listening on //p' "${pids[-1]}" "dnsupstream $i")")
done
log "$NAMESERVERS upstreams (bench/dnsupstream): ${nameservers[*]}"
# Unreachable nameservers: 127.0.1.I on a port nothing listens on (loopback
# refuses at once: every query to them fails).
unreachable=()
for i in $(seq "$NAMESERVERS"); do unreachable+=("127.0.1.$i:$(free_port)"); done
fwd_ns=("${nameservers[@]}")

# --- Corefiles ---------------------------------------------------------------

port=$(free_port)
health_port=$(free_port)
ready_port=$(free_port)
metrics_port=$(free_port)

# corefile N: writes $work/dns-N.yaml (N forward plugins, nameservers
# fwd_ns) and renders it to $work/Corefile-N with `dnsplane corefile`.
corefile() {
	local n=$1 i ns
	{
		echo "apiVersion: operator.dnsplane.io/v1"
		echo "kind: DNS"
		echo "metadata:"
		echo "  name: default"
		echo "spec:"
		if ((n > 0)); then
			echo "  pluginConfig:"
			echo "    forwardPlugins:"
			for i in $(seq "$n"); do
				echo "    - domain: fwd$i.example"
				echo "      nameServers:"
				for ns in "${fwd_ns[@]}"; do echo "      - \"$ns\""; done
			done
		fi
		echo "  upstreamResolvers:"
		echo "    policy: Random"
		echo "    upstreams:"
		for ns in "${nameservers[@]}"; do
			echo "    - {type: Network, address: ${ns%:*}, port: ${ns##*:}}"
		done
	} >"$work/dns-$n.yaml"
	"$work/dnsplane" corefile -f "$work/dns-$n.yaml" --listen "127.0.0.1:$port" --kubeconfig "$kubeconfig" \
		>"$work/Corefile-$n.rendered" 2>"$work/corefile.err" || die "dnsplane corefile, $n forward plugins: $(cat "$work/corefile.err")"
	# Only the fixed ports move (other servers may hold 8080, 8181, 9153).
	sed -e "s/^\( *health\) :8080/\1 127.0.0.1:$health_port/" \
		-e "s/^\( *ready\) :8181\$/\1 127.0.0.1:$ready_port/" \
		-e "s/^\( *prometheus\) :9153\$/\1 127.0.0.1:$metrics_port/" \
		"$work/Corefile-$n.rendered" >"$work/Corefile-$n"
	[[ $(grep -c "prometheus 127.0.0.1:$metrics_port\$" "$work/Corefile-$n") == $((n + 1)) ]] ||
		die "Corefile-$n: the prometheus lines did not move: $(cat "$work/Corefile-$n")"
	grep -q "ready 127.0.0.1:$ready_port\$" "$work/Corefile-$n" || die "Corefile-$n: the ready line did not move"
}

# --- server, metrics, dnsperf ------------------------------------------------

answers() { # NAME WANT
	dig +time=1 +tries=1 +short @127.0.0.1 -p "$port" "$1" A 2>/dev/null | grep -qxF "$2"
}

# start_server N: serves Corefile-N pinned to SERVER_CPU with GOMAXPROCS=1
# and waits for ready (the kubernetes plugin synced) and answers from the
# `.` zone and from the last forwarded domain.
start_server() {
	local n=$1
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$work/Corefile-$n" \
		--reload-interval 0 --log-level warn >"$work/dns-$n.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 600); do
		kill -0 "$server_pid" 2>/dev/null || die "dnsplane dns ($n forward plugins) exited: $(cat "$work/dns-$n.log")"
		if curl -fsS -o /dev/null "http://127.0.0.1:$ready_port/ready" 2>/dev/null &&
			answers example.com 93.184.216.34 &&
			{ [[ $n == 0 || ${fwd_ns[0]} == 127.0.1.* ]] || answers "www.fwd$n.example" "10.0.$((n / 250)).$((n % 250 + 1))"; }; then
			return
		fi
		sleep 0.1
	done
	die "dnsplane dns ($n forward plugins) not ready within 60 s: $(cat "$work/dns-$n.log")"
}

stop_server() {
	stop "$server_pid"
	server_pid=
}

rss_mb() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$server_pid/status"; }
goroutines() {
	curl -fsS "http://127.0.0.1:$metrics_port/metrics" | awk '$1 == "go_goroutines" { print $2 }'
}

# run_dnsperf SECONDS|once QUERYFILE
run_dnsperf() {
	local limit=(-l "$1")
	if [[ $1 == once ]]; then limit=(-n 1); fi
	taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$2" "${limit[@]}" \
		-c "$CLIENTS" -q "$OUTSTANDING" 2>&1 || die "dnsperf failed: $(head -1 "$2")"
}

# qps_of SECONDS|once QUERYFILE: queries per second; a SERVFAIL (or
# REFUSED) fails the run, lost queries are logged.
qps_of() {
	local out qps lost
	out=$(run_dnsperf "$@")
	qps=$(sed -n 's/^ *Queries per second: *//p' <<<"$out")
	lost=$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' <<<"$out")
	[[ -n $qps ]] || die "no QPS in dnsperf's output: $out"
	if sed -n 's/^ *Response codes: *//p' <<<"$out" | grep -Eq 'SERVFAIL|REFUSED'; then
		die "SERVFAIL/REFUSED replies ($(head -1 "$2")): $out"
	fi
	if [[ $lost != 0 ]]; then log "  ($lost queries lost)"; fi
	printf '%.0f\n' "$qps"
}

# Query files: one name of every forwarded domain and of `.` (load), the
# cached names, and distinct uncached names (NXDOMAIN from the upstream's
# zone, so no SERVFAIL).
{
	echo "example.com A"
	for i in $(seq "$max_fwd"); do echo "www.fwd$i.example A"; done
} >"$work/q-load"
echo "example.com A" >"$work/q-dot"
echo "www.fwd1.example A" >"$work/q-fwd"
seq "$COLD_NAMES" | sed 's/.*/c&.example.com A/' >"$work/q-dot-cold"
seq "$COLD_NAMES" | sed 's/.*/c&.fwd1.example A/' >"$work/q-fwd-cold"

log "server on CPU $SERVER_CPU (GOMAXPROCS=1), dnsperf on CPU $CLIENT_CPU; dnsperf -c $CLIENTS -q $OUTSTANDING;" \
	"load average: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS

# 1. Memory and goroutines.
read -ra fw <<<"$FORWARDERS"
first=${fw[0]} last=${fw[-1]}
declare -A rss_idle rss_loaded g_idle g_loaded lines
for n in $FORWARDERS; do
	corefile "$n"
	lines[$n]=$(wc -l <"$work/Corefile-$n")
	start_server "$n"
	sleep 1
	rss_idle[$n]=$(rss_mb)
	g_idle[$n]=$(goroutines)
	qps_of "$LOAD" "$work/q-load" >/dev/null
	rss_loaded[$n]=$(rss_mb)
	g_loaded[$n]=$(goroutines)
	log "  $n forward plugins: idle ${rss_idle[$n]} MB, ${g_idle[$n]} goroutines;" \
		"after ${LOAD}s of load ${rss_loaded[$n]} MB, ${g_loaded[$n]} goroutines"
	stop_server
done

# 1b. The largest count again with unreachable nameservers in the forward
# plugins (the `.` zone's stay reachable): every forwarded query fails,
# which is what starts the forward plugin's health checks.
fwd_ns=("${unreachable[@]}")
corefile "$last"
mv "$work/Corefile-$last" "$work/Corefile-unreachable"
start_server unreachable
sleep 1
rss_idle[u]=$(rss_mb)
g_idle[u]=$(goroutines)
out=$(run_dnsperf "$LOAD" "$work/q-load")
rss_loaded[u]=$(rss_mb)
g_loaded[u]=$(goroutines)
lines[u]=$(wc -l <"$work/Corefile-unreachable")
log "  $last forward plugins, unreachable: idle ${rss_idle[u]} MB, ${g_idle[u]} goroutines;" \
	"after ${LOAD}s of load ${rss_loaded[u]} MB, ${g_loaded[u]} goroutines" \
	"($(sed -n 's/^ *Response codes: *//p' <<<"$out"))"
sleep 3
g_later=$(goroutines)
log "  3 s later: $g_later goroutines"
stop_server
fwd_ns=("${nameservers[@]}")

# 2. Forwarded domain against `.`.
corefile "$QPS_FORWARDERS"
start_server "$QPS_FORWARDERS"
declare -A qps
for what in fwd dot; do
	qps_of 1 "$work/q-$what" >/dev/null
	qps[$what]=$(qps_of "$DURATION" "$work/q-$what")
	qps[$what-cold]=$(qps_of once "$work/q-$what-cold")
	log "  $what: cached ${qps[$what]} QPS, uncached ${qps[$what-cold]} QPS"
done
stop_server
log "done in $((SECONDS - start)) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo
echo "Cluster DNS serving the operator's Corefile; $NAMESERVERS nameservers per forward plugin" \
	"(running bench/dnsupstream on 127.0.0.1-$NAMESERVERS)"
printf '%-16s %9s %9s %11s %9s %11s\n' "forward plugins" "Corefile" "RSS idle" "goroutines" "RSS load" "goroutines"
printf '%-16s %9s %9s %11s %9s %11s\n' "" "lines" "MB" "idle" "MB" "load"
for n in $FORWARDERS; do
	printf '%-16s %9s %9s %11s %9s %11s\n' "$n" "${lines[$n]}" "${rss_idle[$n]}" "${g_idle[$n]}" "${rss_loaded[$n]}" "${g_loaded[$n]}"
done
printf '%-16s %9s %9s %11s %9s %11s\n' "$last unreachable" "${lines[u]}" "${rss_idle[u]}" "${g_idle[u]}" "${rss_loaded[u]}" "${g_loaded[u]}"
echo "(unreachable: the forward plugins' nameservers are 127.0.1.1-$NAMESERVERS on closed ports; 3 s after the load: $g_later goroutines)"
if ((last > first)); then
	awk -v g0="${g_idle[$first]}" -v g1="${g_idle[$last]}" -v r0="${rss_idle[$first]}" -v r1="${rss_idle[$last]}" \
		-v n=$((last - first)) -v ns="$NAMESERVERS" 'BEGIN {
		printf "per forward plugin (%d to %d, idle): %.1f goroutines (%.2f per nameserver), %.2f MB\n", '"$first"', '"$last"', (g1 - g0) / n, (g1 - g0) / n / ns, (r1 - r0) / n }'
fi
echo
echo "QPS with $QPS_FORWARDERS forward plugins: cached = one name for ${DURATION}s; uncached = $COLD_NAMES distinct names once"
printf '%-26s %9s %9s\n' query cached uncached
printf '%-26s %9s %9s\n' "www.fwd1.example (forward)" "${qps[fwd]}" "${qps[fwd-cold]}"
printf '%-26s %9s %9s\n' "example.com (.)" "${qps[dot]}" "${qps[dot-cold]}"
printf '%-26s %9s %9s\n' "ratio forward / ." "$(ratio "${qps[fwd]}" "${qps[dot]}")" "$(ratio "${qps[fwd-cold]}" "${qps[dot-cold]}")"
