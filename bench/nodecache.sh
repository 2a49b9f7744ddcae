#!/usr/bin/env bash
# The node cache against NodeLocal DNSCache's (bench/README.md, "Node cache
# against NodeLocal DNSCache"): cached queries per second, server CPU per
# query and RSS of
#
#   stock      stock CoreDNS 1.15.0 serving NodeLocal DNSCache's Corefile
#              (kubernetes/kubernetes cluster/addons/dns/nodelocaldns: the
#              cluster domain and reverse zones to the cluster DNS with
#              force_tcp, `cache { success 9984 30; denial 9984 5 }`, `.` to
#              the upstream resolvers; errors, reload, loop, bind,
#              prometheus, health), its pillars filled in;
#   nodecache  `dnsplane nodecache` with the same endpoints (--metrics,
#              --health), the Corefile it renders (errors, bind, loopguard,
#              warmstack, searchopt, cache, forward);
#   nowarm     that Corefile without warmstack (`dnsplane dns --conf`);
#   same-file  `dnsplane dns --conf` serving NodeLocal DNSCache's Corefile
#              (what the binary costs on the same chain);
#
# and, when named in SERVERS, what warmstack costs a lean chain (issue 30):
#
#   lean, lean-nowarm                `dnsplane dns --conf` with `.` { bind;
#                                    [warmstack;] template (for another
#                                    zone); cache 30; forward } (3 plugins
#                                    after warmstack);
#   lean-errors, lean-errors-nowarm  the same with errors (4 plugins).
#
# bench/dnsupstream plays the cluster DNS (cluster.local, svc1.ns1.svc) and
# the upstream resolver (example.com). Queries: a cached Service name and a
# cached external name; every reply must be NOERROR. Each server runs alone,
# pinned to CPU $SERVER_CPU with GOMAXPROCS=1, dnsperf to $CLIENT_CPU; the
# order rotates from round to round and the table has the medians. RSS:
# VmRSS idle (after SETTLE seconds, before any query) and after the load
# (VmRSS and VmHWM).
#
#   bash bench/nodecache.sh
#   ROUNDS=5 DURATION=20 bash bench/nodecache.sh
#   SERVERS="stock nodecache" bash bench/nodecache.sh
#   SERVERS="lean lean-nowarm lean-errors lean-errors-nowarm" bash bench/nodecache.sh
#   DNSPLANE=/path/to/dnsplane DNSPLANE_COREDNS=/path/to/coredns bash bench/nodecache.sh
set -euo pipefail
shopt -s inherit_errexit

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}        # seconds per dnsperf run
CLIENTS=${CLIENTS:-4}           # dnsperf -c
OUTSTANDING=${OUTSTANDING:-100} # dnsperf -q
SETTLE=${SETTLE:-2}             # seconds before the idle RSS is read
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVERS=${SERVERS:-"stock nodecache nowarm same-file"}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()     # the upstream
server_pid= # the DNS server under test, when one runs

trap cleanup EXIT
trap 'exit 130' INT TERM

script=nodecache.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

require_tools
if [[ -n ${DNSPLANE_COREDNS:-} ]]; then
	coredns=$DNSPLANE_COREDNS
fi
if [[ -n ${DNSPLANE:-} ]]; then
	cp "$DNSPLANE" "$work/dnsplane"
	(cd "$repo" && go build -o "$work/dnsupstream" ./bench/dnsupstream)
else
	log "building dnsplane and dnsupstream..."
	(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/dnsupstream" ./bench/dnsupstream)
fi
# Private copies, so neither server shares pages with another process.
cp "$coredns" "$work/coredns"
log "stock CoreDNS: $coredns ($("$work/coredns" -version | sed -n 1p))"

: >"$work/upstream.out"
: >"$work/upstream.out.err"
"$work/dnsupstream" -zone cluster.local,example.com -a svc1.ns1.svc.cluster.local=10.96.0.20 \
	-a example.com=93.184.216.34 -ttl 3600 >"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" "dnsupstream")
log "cluster DNS and upstream resolver (bench/dnsupstream) at $upstream"

echo "svc1.ns1.svc.cluster.local A" >"$work/q-service"
echo "example.com A" >"$work/q-external"

port=$(free_port)
health=127.0.0.1:$(free_port)
metrics=127.0.0.1:$(free_port)

# NodeLocal DNSCache's Corefile (nodelocaldns.yaml), __PILLAR__LOCAL__DNS__
# = 127.0.0.1, __PILLAR__DNS__SERVER__ blank, __PILLAR__CLUSTER__DNS__ and
# __PILLAR__UPSTREAM__SERVERS__ = the test upstream.
reverse_block() {
	cat <<EOF
$1:$port {
    errors
    cache 30
    reload
    loop
    bind 127.0.0.1
    forward . $upstream {
        force_tcp
    }
    prometheus $metrics
}
EOF
}
{
	cat <<EOF
cluster.local:$port {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    reload
    loop
    bind 127.0.0.1
    forward . $upstream {
        force_tcp
    }
    prometheus $metrics
    health $health
}
EOF
	reverse_block in-addr.arpa
	reverse_block ip6.arpa
	cat <<EOF
.:$port {
    errors
    cache 30
    reload
    loop
    bind 127.0.0.1
    forward . $upstream
    prometheus $metrics
}
EOF
} >"$work/Corefile.nodelocal"

printf 'search corp.example\nnameserver 127.0.0.53\n' >"$work/resolv.conf"
nodecache_args=(nodecache --listen "127.0.0.1:$port" --cluster-dns "$upstream" --upstream-resolv-conf "$work/resolv.conf"
	--metrics "$metrics" --health "$health" --log-level warn)
"$work/dnsplane" "${nodecache_args[@]}" --print-corefile >"$work/Corefile.nodecache"
grep -q '^ *warmstack$' "$work/Corefile.nodecache" || die "no warmstack in the node cache's Corefile"
grep -v '^ *warmstack$' "$work/Corefile.nodecache" >"$work/Corefile.nowarm"

# lean_corefile WARMSTACK ERRORS: the lean chain, with warmstack and errors
# when those are "yes".
lean_corefile() {
	echo ".:$port {"
	echo "    bind 127.0.0.1"
	if [[ $1 == yes ]]; then echo "    warmstack"; fi
	if [[ $2 == yes ]]; then echo "    errors"; fi
	cat <<EOF
    template IN A lean.example {
        answer "{{ .Name }} 60 IN A 192.0.2.1"
    }
    cache 30
    forward . $upstream
}
EOF
}
lean_corefile yes no >"$work/Corefile.lean"
lean_corefile no no >"$work/Corefile.lean-nowarm"
lean_corefile yes yes >"$work/Corefile.lean-errors"
lean_corefile no yes >"$work/Corefile.lean-errors-nowarm"

# answers NAME WANT: whether the server answers NAME A with WANT.
answers() { [[ $(dig +short +time=1 +tries=1 -p "$port" @127.0.0.1 "$1" A 2>/dev/null) == *"$2"* ]]; }

start_server() {
	local s=$1
	case $s in
	stock)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/coredns" -conf "$work/Corefile.nodelocal" -quiet >"$work/$s.log" 2>&1 &
		;;
	nodecache)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" "${nodecache_args[@]}" >"$work/$s.log" 2>&1 &
		;;
	nowarm)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$work/Corefile.nowarm" \
			--reload-interval 0 --log-level warn >"$work/$s.log" 2>&1 &
		;;
	same-file)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$work/Corefile.nodelocal" \
			--reload-interval 0 --log-level warn >"$work/$s.log" 2>&1 &
		;;
	lean | lean-nowarm | lean-errors | lean-errors-nowarm)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$work/Corefile.$s" \
			--reload-interval 0 --log-level warn >"$work/$s.log" 2>&1 &
		;;
	*) die "unknown server $s" ;;
	esac
	server_pid=$!
	for _ in $(seq 300); do
		kill -0 "$server_pid" 2>/dev/null || die "$s exited: $(cat "$work/$s.log")"
		if dig +short +time=1 +tries=1 -p "$port" @127.0.0.1 . NS >/dev/null 2>&1; then
			return
		fi
		sleep 0.1
	done
	die "$s did not answer within 30 s: $(cat "$work/$s.log")"
}

status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$server_pid/status"; }

run_dnsperf() {
	taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$2" -l "$1" -c "$CLIENTS" -q "$OUTSTANDING" 2>&1 ||
		die "dnsperf failed: $(cat "$2")"
}

# qps_of SECONDS QUERYFILE: QPS and queries completed; every reply NOERROR.
qps_of() {
	local out qps done codes
	out=$(run_dnsperf "$@")
	qps=$(sed -n 's/^ *Queries per second: *//p' <<<"$out")
	done=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' <<<"$out")
	codes=$(sed -n 's/^ *Response codes: *//p' <<<"$out")
	[[ -n $qps && -n $done ]] || die "no QPS in dnsperf's output: $out"
	[[ $codes == "NOERROR "*"(100.00%)" ]] || die "replies other than NOERROR ($(cat "$2")): $codes"
	printf '%.0f %s\n' "$qps" "$done"
}

median() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
hz=$(getconf CLK_TCK)

declare -A vals # "<metric>|<server>" -> space-separated values per round
add() { vals[$1|$2]="${vals[$1|$2]:-}${vals[$1|$2]:+ }$3"; }

# measure CASE SERVER QUERYFILE: a 1 s warm-up (fills the cache), then
# DURATION seconds; QPS and µs of server CPU per query.
measure() {
	local c=$1 s=$2 qf=$3 v n t0 t1 us
	qps_of 1 "$qf" >/dev/null
	t0=$(cpu_ticks)
	read -r v n <<<"$(qps_of "$DURATION" "$qf")"
	t1=$(cpu_ticks)
	us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
	log "  $s, $c: $v QPS, $us µs CPU/query"
	add "$c QPS" "$s" "$v"
	add "$c CPU µs/query" "$s" "$us"
}

read -r -a servers <<<"$SERVERS"
log "server on CPU $SERVER_CPU (GOMAXPROCS=1), dnsperf on CPU $CLIENT_CPU; dnsperf -c $CLIENTS -q $OUTSTANDING;" \
	"$ROUNDS rounds of ${DURATION}s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
for r in $(seq "$ROUNDS"); do
	for i in $(seq 0 $((${#servers[@]} - 1))); do
		s=${servers[$(((i + r - 1) % ${#servers[@]}))]}
		log "round $r: $s"
		start_server "$s"
		sleep "$SETTLE"
		add "RSS idle MiB" "$s" "$(awk -v k="$(status_kb VmRSS)" 'BEGIN { printf "%.1f", k / 1024 }')"
		answers svc1.ns1.svc.cluster.local 10.96.0.20 || die "$s: no answer for svc1.ns1.svc.cluster.local"
		answers example.com 93.184.216.34 || die "$s: no answer for example.com"
		measure "service" "$s" "$work/q-service"
		measure "external" "$s" "$work/q-external"
		add "RSS after load MiB" "$s" "$(awk -v k="$(status_kb VmRSS)" 'BEGIN { printf "%.1f", k / 1024 }')"
		add "peak RSS MiB" "$s" "$(awk -v k="$(status_kb VmHWM)" 'BEGIN { printf "%.1f", k / 1024 }')"
		stop "$server_pid"
		server_pid=
	done
done
log "done in $((SECONDS - start)) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
printf '%-22s %-18s %-30s %9s %9s\n' metric server "per round" median "/ stock"
for m in "service QPS" "external QPS" "service CPU µs/query" "external CPU µs/query" "RSS idle MiB" "RSS after load MiB" "peak RSS MiB"; do
	for s in "${servers[@]}"; do
		# shellcheck disable=SC2086 # the rounds split on purpose
		med=$(median ${vals[$m|$s]})
		ratio=""
		if [[ -n ${vals[$m|stock]:-} ]]; then
			# shellcheck disable=SC2086
			ratio=$(awk -v a="$med" -v b="$(median ${vals[$m|stock]})" 'BEGIN { printf "%.2f", a / b }')
		fi
		printf '%-22s %-18s %-30s %9s %9s\n' "$m" "$s" "${vals[$m|$s]}" "$med" "$ratio"
	done
done
