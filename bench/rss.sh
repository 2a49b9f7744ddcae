#!/usr/bin/env bash
# Memory of the cluster DNS, side by side (bench/README.md, "RSS against stock
# CoreDNS"): `dnsplane dns --conf F` and stock CoreDNS 1.15 `coredns -conf F`
# serving the same Corefile, idle, with 0 pods and with 2,000 pods in the API.
#
# The Corefile is one both binaries load (searchexpand is not in stock):
#
#   .:PORT { bind 127.0.0.1; errors; ready; prometheus;
#            kubernetes cluster.local in-addr.arpa ip6.arpa { kubeconfig };
#            forward . <bench/dnsupstream>; cache 30 }
#
# Neither server watches pods with it (that takes `pods verified`); with
# VERIFIED=1 (the default) stock CoreDNS also runs with `pods verified`, the
# configuration its autopath needs, as a third row. With NODECACHE=1 (the
# default) the node caches too, at the first pod count (they read nothing
# from the API): `dnsplane nodecache` against stock CoreDNS serving the
# Corefile it prints (--print-corefile) without its searchopt blocks, which
# stock does not have; they forward to the test upstream as their cluster DNS.
#
# Each server is a private copy of its binary in the temp dir, so neither
# shares pages with another process (the API server runs its own copy of
# dnsplane) and both files are equally in the page cache. A round starts
# each server alone, waits for /ready (the kubernetes plugin's informers
# synced), sends a Service and an external query, waits SETTLE seconds and
# reads VmRSS, RssAnon and RssFile from /proc/PID/status, Pss from
# /proc/PID/smaps_rollup and the Go heap (go_memstats_heap_inuse_bytes) from
# the prometheus plugin; the order alternates between rounds, and the table
# has the medians.
#
#   bash bench/rss.sh
#   PODS="0 2000" ROUNDS=3 SETTLE=10 VERIFIED=1 bash bench/rss.sh
#   DNSPLANE=/path/to/dnsplane bash bench/rss.sh   # a prebuilt dnsplane
#   LOAD=10 bash bench/rss.sh   # after 10 s of dnsperf load, not idle
set -euo pipefail
shopt -s inherit_errexit

PODS=${PODS:-"0 2000"}
ROUNDS=${ROUNDS:-3}
SETTLE=${SETTLE:-10}
LOAD=${LOAD:-0} # seconds of dnsperf load before the settle (0: idle)
VERIFIED=${VERIFIED:-1}
NODECACHE=${NODECACHE:-1}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()     # the API server and the upstream
server_pid= # the DNS server under test, when one runs

trap cleanup EXIT
trap 'exit 130' INT TERM

script=rss.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

require_tools
command -v curl >/dev/null 2>&1 || die "curl is required"

if [[ -n ${DNSPLANE:-} ]]; then
	cp "$DNSPLANE" "$work/dnsplane" # a build to compare, e.g. of an older commit
else
	log "building dnsplane..."
	(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane)
fi
log "building dnsupstream and podfill..."
(cd "$repo" && go build -o "$work/dnsupstream" ./bench/dnsupstream && go build -o "$work/podfill" ./bench/podfill)
# Private copies: the servers under test share no page with any other
# process (Pss is then their own), and both files were just written.
cp "$work/dnsplane" "$work/dnsplane-api"
cp "$coredns" "$work/coredns"
log "stock CoreDNS: $coredns ($("$work/coredns" -version | sed -n 1p))"

: >"$work/apiserver.out"
: >"$work/apiserver.out.err"
"$work/dnsplane-api" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
	--bind-address 127.0.0.1 --log-level warn >"$work/apiserver.out" 2>"$work/apiserver.out.err" &
pids+=($!)
kubeconfig=$(wait_line "$work/apiserver.out" 's/^kubeconfig: //p' "${pids[-1]}" "dnsplane apiserver")
context=$(kubectl --kubeconfig "$kubeconfig" config current-context)
kubectl --kubeconfig "$kubeconfig" create namespace ns1 >/dev/null
kubectl --kubeconfig "$kubeconfig" -n ns1 create service clusterip svc1 --tcp=80:80 >/dev/null

: >"$work/upstream.out"
: >"$work/upstream.out.err"
"$work/dnsupstream" -zone example.com -a example.com=93.184.216.34 >"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" "dnsupstream")

port=$(free_port)
ready_port=$(free_port)
metrics_port=$(free_port)
# corefile EXTRA: the Corefile, with EXTRA inside the kubernetes block.
corefile() {
	cat <<EOF
.:$port {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:$ready_port
    prometheus 127.0.0.1:$metrics_port
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $kubeconfig $context
        $1
    }
    forward . $upstream
    cache 30
}
EOF
}
corefile "" >"$work/Corefile"
corefile "pods verified" >"$work/Corefile.verified"

nc_port=$(free_port)
nc_args=(--listen "127.0.0.1:$nc_port" --cluster-dns "$upstream"
	--ready "127.0.0.1:$ready_port" --metrics "127.0.0.1:$metrics_port" --log-level warn)
"$work/dnsplane" nodecache "${nc_args[@]}" --print-corefile |
	awk '/^ *(loopguard|warmstack)$/ { next } /^ *(searchopt|loopguard) .*\{$/ { skip = 1 } !skip { print } skip && /^ *}$/ { skip = 0 }' >"$work/Corefile.nodecache"
grep -qE 'searchopt|loopguard|warmstack' "$work/Corefile.nodecache" && die "a plugin of ours left in the stock node cache's Corefile"

# The rows, and the row each is compared with.
servers=(dnsplane stock)
declare -A base=([dnsplane]=stock [stock]=stock [stock-verified]=stock [nodecache]=stock-nodecache [stock-nodecache]=stock-nodecache)
if [[ $VERIFIED == 1 ]]; then servers+=(stock-verified); fi
first_pods=${PODS%% *}

# answers SERVER NAME PORT: waits (10 s at most) until the server answers NAME.
answers() {
	for _ in $(seq 20); do
		if dig +time=1 +tries=1 +short @127.0.0.1 -p "$3" "$2" A | grep -q .; then return; fi
		sleep 0.5
	done
	die "$1: no answer for $2"
}

# measure SERVER: one start, settle and reading; sets line to
# "vmrss rssanon rssfile pss heapinuse" in kB. Not run in a subshell, so
# that cleanup knows server_pid when it fails.
measure() {
	local s=$1 ok=
	case $s in
	dnsplane) "$work/dnsplane" dns --conf "$work/Corefile" --log-level warn >"$work/$s.log" 2>&1 & ;;
	stock) "$work/coredns" -conf "$work/Corefile" -quiet >"$work/$s.log" 2>&1 & ;;
	stock-verified) "$work/coredns" -conf "$work/Corefile.verified" -quiet >"$work/$s.log" 2>&1 & ;;
	nodecache) "$work/dnsplane" nodecache "${nc_args[@]}" >"$work/$s.log" 2>&1 & ;;
	stock-nodecache) "$work/coredns" -conf "$work/Corefile.nodecache" -quiet >"$work/$s.log" 2>&1 & ;;
	esac
	server_pid=$!
	for _ in $(seq 600); do
		kill -0 "$server_pid" 2>/dev/null || die "$s exited: $(cat "$work/$s.log")"
		if curl -fs "http://127.0.0.1:$ready_port/ready" >/dev/null 2>&1; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[[ -n $ok ]] || die "$s not ready within 60 s"
	if [[ $s == *nodecache ]]; then
		answers "$s" example.com "$nc_port"
	else
		answers "$s" svc1.ns1.svc.cluster.local "$port"
		answers "$s" example.com "$port"
	fi
	if ((LOAD > 0)); then
		# Serving, not idle: LOAD seconds of queries and a metrics
		# scrape, so that the reading includes what the hot path maps.
		local qf=$work/q-dns
		if [[ $s == *nodecache ]]; then qf=$work/q-nodecache; fi
		dnsperf -s 127.0.0.1 -p "$([[ $s == *nodecache ]] && echo "$nc_port" || echo "$port")" -d "$qf" \
			-l "$LOAD" -c 4 -q 50 >"$work/$s.dnsperf" 2>&1 || die "$s: dnsperf failed: $(cat "$work/$s.dnsperf")"
		curl -fs "http://127.0.0.1:$metrics_port/metrics" >/dev/null
	fi
	sleep "$SETTLE"
	# /proc first: a scrape allocates.
	local mem heap
	mem=$(awk '
		FILENAME ~ /status$/ && /^(VmRSS|RssAnon|RssFile):/ { v[$1] = $2 }
		FILENAME ~ /smaps_rollup$/ && /^Pss:/ { pss = $2 }
		END { print v["VmRSS:"], v["RssAnon:"], v["RssFile:"], pss }
	' "/proc/$server_pid/status" "/proc/$server_pid/smaps_rollup")
	heap=$(curl -fs "http://127.0.0.1:$metrics_port/metrics" | awk '/^go_memstats_heap_inuse_bytes / { printf "%.0f", $2 / 1024 }')
	line="$mem $heap"
	stop "$server_pid"
	server_pid=
}

printf 'svc1.ns1.svc.cluster.local A\nexample.com A\n' >"$work/q-dns"
printf 'example.com A\n' >"$work/q-nodecache"
if ((LOAD > 0)); then command -v dnsperf >/dev/null 2>&1 || die "dnsperf is required with LOAD"; fi

# median of the numbers on stdin
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

declare -A res
for pods in $PODS; do
	if [[ $pods -gt 0 ]]; then
		log "filling namespace fill to $pods pods..."
		"$work/podfill" --kubeconfig "$kubeconfig" --namespace fill --count "$pods" >&2
	fi
	for round in $(seq "$ROUNDS"); do
		rows=("${servers[@]}")
		if [[ $NODECACHE == 1 && $pods == "$first_pods" ]]; then rows+=(nodecache stock-nodecache); fi
		order=("${rows[@]}")
		if ((round % 2 == 0)); then
			order=()
			for ((i = ${#rows[@]} - 1; i >= 0; i--)); do order+=("${rows[i]}"); done
		fi
		for s in "${order[@]}"; do
			measure "$s"
			log "pods=$pods round=$round $s: $line (kB: VmRSS RssAnon RssFile Pss heap)"
			res[$pods|$s]+="$line"$'\n'
		done
	done
done

mb() { awk '{ printf "%.1f", $1 / 1024 }'; }
col() { printf %s "${res[$1]}" | awk -v c="$2" 'NF { print $c }' | median; }
if ((LOAD > 0)); then
	echo "Memory after start, /ready, two queries, ${LOAD}s of dnsperf load and a metrics scrape, and ${SETTLE}s; medians of $ROUNDS rounds; MB"
else
	echo "Memory after start, /ready, two queries and ${SETTLE}s; medians of $ROUNDS rounds; MB"
fi
printf '%-6s %-15s %7s %8s %8s %7s %6s %6s %6s  %s\n' pods server VmRSS RssAnon RssFile Pss heap VmRSS× Pss× "(ratios to)"
for pods in $PODS; do
	rows=("${servers[@]}")
	if [[ $NODECACHE == 1 && $pods == "$first_pods" ]]; then rows+=(nodecache stock-nodecache); fi
	for s in "${rows[@]}"; do
		b=${base[$s]}
		printf '%-6s %-15s %7s %8s %8s %7s %6s %6s %6s  %s\n' "$pods" "$s" \
			"$(col "$pods|$s" 1 | mb)" "$(col "$pods|$s" 2 | mb)" "$(col "$pods|$s" 3 | mb)" \
			"$(col "$pods|$s" 4 | mb)" "$(col "$pods|$s" 5 | mb)" \
			"$(awk -v a="$(col "$pods|$s" 1)" -v b="$(col "$pods|$b" 1)" 'BEGIN { printf "%.2f", a / b }')" \
			"$(awk -v a="$(col "$pods|$s" 4)" -v b="$(col "$pods|$b" 4)" 'BEGIN { printf "%.2f", a / b }')" "$b"
	done
done
