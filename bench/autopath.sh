#!/usr/bin/env bash
# Autopath side by side (docs/autopath.md, "Against stock CoreDNS autopath"), on 127.0.0.1 only:
#
#   stock    stock CoreDNS 1.15: autopath @kubernetes, cache 30, kubernetes
#            with `pods verified` (a watch on every pod, to map the client's
#            address to its namespace), forward to bench/dnsupstream;
#   dnsplane `dnsplane dns`: searchexpand (with its answer cache), cache 30,
#            kubernetes (no pod watch), forward; queries carry the search
#            list option the node cache sends (dnsperf -E).
#
# Both get the same API server (`dnsplane apiserver`, embedded etcd) with
# the Services ns1/svc1 and ns2/svc1, the pod ns1/client whose status.podIP
# is 127.0.0.1 (dnsperf's address, so stock autopath applies), and FILL pods
# in the namespace fill (bench/podfill). The host search domain corp.example
# is in the resolv.conf stock CoreDNS reads (bind-mounted over
# /etc/resolv.conf in a private mount namespace, so root is needed: autopath
# takes the host search list from there) and in dnsplane's option.
#
# Query kinds, as each design receives them from a pod in ns1 (ndots:5):
#   external   example.com           stock: example.com.ns1.svc.cluster.local
#   service    svc1 (same namespace) stock: svc1.ns1.svc.cluster.local (direct hit)
#   svc.ns     svc1.ns2              stock: svc1.ns2.ns1.svc.cluster.local
#   host       intranet (found in corp.example)
#   nxdomain   nope
#   dnsplane:  <name>.search.ns1.cluster.local.ap.k8s.io with the option.
#
# 1. QPS with PODS_QPS pods, ROUNDS rounds; in each round the two servers run
#    one after the other (the order alternates), each pinned to SERVER_CPU
#    with GOMAXPROCS=1, dnsperf pinned to CLIENT_CPU; every kind gets a 1 s
#    warm-up, then DURATION seconds.
# 2. RSS (VmRSS) of each server after 2 s of every kind, for each pod count
#    in PODS (pods are added between counts; podfill prints how long it took).
# 3. End to end through a node cache: `dnsplane nodecache` (which adds the
#    option) in front of dnsplane dns, and a stock CoreDNS node cache (cache,
#    cluster domain forwarded over TCP) in front of stock autopath. On
#    loopback the node cache's address is still the pod's, so stock autopath
#    works here, which it does not on a real node (coredns#4308). warm: one
#    external name again and again (the node cache answers); cold: a fresh
#    node cache and COLD_NAMES distinct external names, each sent once.
#
#   bash bench/autopath.sh
#   PODS="0 5000 20000" PODS_QPS=5000 ROUNDS=3 DURATION=10 bash bench/autopath.sh
set -euo pipefail
shopt -s inherit_errexit # command substitutions fail like the rest

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}        # seconds per dnsperf run
CLIENTS=${CLIENTS:-4}           # dnsperf -c
OUTSTANDING=${OUTSTANDING:-100} # dnsperf -q
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PODS=${PODS:-"0 5000 20000"}
PODS_QPS=${PODS_QPS:-5000}
COLD_NAMES=${COLD_NAMES:-20000}
KINDS=(external service svc.ns host nxdomain)

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()      # long-running helpers: the API server, the upstream
server_pid=  # the DNS server under test, when one runs
cache_pid=   # the node cache, when one runs

trap cleanup EXIT
trap 'exit 130' INT TERM

script=autopath.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

# --- tools -------------------------------------------------------------------

require_tools

log "building dnsplane, dnsupstream and podfill..."
(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/dnsupstream" ./bench/dnsupstream && go build -o "$work/podfill" ./bench/podfill)
log "stock CoreDNS: $coredns ($("$coredns" -version | sed -n 1p))"

# free_port and wait_line are in bench/lib.sh.

# --- API server, objects, upstream -------------------------------------------

: >"$work/apiserver.out" # the background job opens it asynchronously
: >"$work/apiserver.out.err"
"$work/dnsplane" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
	--bind-address 127.0.0.1 --log-level warn >"$work/apiserver.out" 2>"$work/apiserver.out.err" &
pids+=($!)
kubeconfig=$(wait_line "$work/apiserver.out" 's/^kubeconfig: //p' "${pids[-1]}" "dnsplane apiserver")
context=$(kubectl --kubeconfig "$kubeconfig" config current-context)
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }
k create namespace ns1 >/dev/null
k create namespace ns2 >/dev/null
k -n ns1 create service clusterip svc1 --tcp=80:80 >/dev/null
k -n ns2 create service clusterip svc1 --tcp=80:80 >/dev/null
svc1=$(k -n ns1 get service svc1 -o 'jsonpath={.spec.clusterIP}')
[[ -n $svc1 ]] || die "ns1/svc1 has no ClusterIP"
# The pod dnsperf stands for: status is written through the status
# subresource, as a kubelet does (create drops it).
k -n ns1 run client --image=registry.k8s.io/pause:3.10 --restart=Never >/dev/null
k -n ns1 patch pod client --subresource=status --type=merge \
	-p '{"status":{"phase":"Running","podIP":"127.0.0.1","podIPs":[{"ip":"127.0.0.1"}]}}' >/dev/null
[[ $(k -n ns1 get pod client -o 'jsonpath={.status.podIP}') == 127.0.0.1 ]] || die "ns1/client has no podIP 127.0.0.1"

: >"$work/upstream.out"
: >"$work/upstream.out.err"
"$work/dnsupstream" -zone example.com,corp.example -a example.com=93.184.216.34 \
	-a intranet.corp.example=10.9.9.9 >"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" "dnsupstream")
log "API server up; ns1/svc1 is $svc1; upstream (bench/dnsupstream) at $upstream"

# The host search list: stock autopath reads it from /etc/resolv.conf, the
# dnsplane node cache from --upstream-resolv-conf.
printf 'nameserver %s\nsearch corp.example\n' "${upstream%:*}" >"$work/resolv.conf"

search_list="ns1.svc.cluster.local,svc.cluster.local,cluster.local,corp.example"
option="65534:$(printf %s "$search_list" | od -An -v -tx1 | tr -d ' \n')"
declare -A base=([external]=example.com [service]=svc1 [svc.ns]=svc1.ns2 [host]=intranet [nxdomain]=nope)
for kind in "${KINDS[@]}"; do
	echo "${base[$kind]}.ns1.svc.cluster.local A" >"$work/q-stock-$kind"
	echo "${base[$kind]}.search.ns1.cluster.local.ap.k8s.io A" >"$work/q-dnsplane-$kind"
done
# cold: distinct external names (NXDOMAIN from the upstream's example.com
# zone, after every search domain missed); each misses the node cache.
seq "$COLD_NAMES" | sed 's/.*/c&.example.com.ns1.svc.cluster.local A/' >"$work/q-stock-cold"
seq "$COLD_NAMES" | sed 's/.*/c&.example.com.search.ns1.cluster.local.ap.k8s.io A/' >"$work/q-dnsplane-cold"

port=$(free_port)
cache_port=$(free_port)
cat >"$work/Corefile.stock" <<EOF
.:$port {
    bind 127.0.0.1
    errors
    autopath @kubernetes
    cache 30
    kubernetes cluster.local {
        kubeconfig $kubeconfig $context
        pods verified
    }
    forward . $upstream {
        prefer_udp
    }
}
EOF
cat >"$work/Corefile.dnsplane" <<EOF
.:$port {
    bind 127.0.0.1
    errors
    searchexpand cluster.local
    cache 30
    kubernetes cluster.local {
        kubeconfig $kubeconfig $context
    }
    forward . $upstream {
        prefer_udp
    }
}
EOF
# NodeLocal DNSCache's layout: the cluster domain over TCP to the cluster
# DNS, the rest upstream.
cat >"$work/Corefile.stockcache" <<EOF
cluster.local:$cache_port {
    bind 127.0.0.1
    errors
    cache 30
    forward . 127.0.0.1:$port {
        force_tcp
    }
}
.:$cache_port {
    bind 127.0.0.1
    errors
    cache 30
    forward . $upstream
}
EOF

# --- servers and dnsperf -----------------------------------------------------

# dig_kind KIND SERVER: one query of KIND to the server under test.
dig_kind() {
	local name
	name=$(cut -d' ' -f1 "$work/q-$2-$1")
	if [[ $2 == dnsplane ]]; then
		dig +time=2 +tries=1 @127.0.0.1 -p "$port" "$name" A "+ednsopt=$option" 2>/dev/null || true
	else
		dig +time=2 +tries=1 @127.0.0.1 -p "$port" "$name" A 2>/dev/null || true
	fi
}

# start_server stock|dnsplane: starts the server pinned to SERVER_CPU with
# GOMAXPROCS=1 and waits until it answers svc1.ns2 through autopath (stock:
# once its pod watch has synced and knows the client pod).
start_server() {
	local s=$1
	case $s in
	dnsplane)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$work/Corefile.dnsplane" \
			--reload-interval 0 --log-level warn >"$work/$s.log" 2>&1 &
		;;
	stock)
		# exec keeps the pid CoreDNS's own (for its RSS).
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" unshare -m sh -c \
			'mount --bind "$1" /etc/resolv.conf && exec "$2" -conf "$3" -quiet' sh \
			"$work/resolv.conf" "$coredns" "$work/Corefile.stock" >"$work/$s.log" 2>&1 &
		;;
	esac
	server_pid=$!
	for _ in $(seq 600); do
		kill -0 "$server_pid" 2>/dev/null || die "$s exited: $(cat "$work/$s.log")"
		if dig_kind svc.ns "$s" | grep -q '^svc1\.ns2\.svc\.cluster\.local\..*IN[[:space:]]*A'; then
			return
		fi
		sleep 0.1
	done
	die "$s did not answer svc1.ns2 through autopath within 60 s: $(cat "$work/$s.log")"
}

stop_server() {
	stop "$server_pid"
	server_pid=
}

# check_answers SERVER: every kind gets the expected answer.
check_answers() {
	local s=$1 kind out
	local -A want=([external]=93.184.216.34 [service]=$svc1 [svc.ns]=svc1.ns2.svc.cluster.local [host]=10.9.9.9 [nxdomain]=NXDOMAIN)
	for kind in "${KINDS[@]}"; do
		out=$(dig_kind "$kind" "$s")
		grep -qF "${want[$kind]}" <<<"$out" || die "$s, $kind: want ${want[$kind]} in: $out"
	done
}

# run_dnsperf SECONDS|once QUERYFILE PORT [DNSPERF-ARGS...]
run_dnsperf() {
	local limit=(-l "$1") qf=$2 p=$3
	shift 3
	if [[ ${limit[1]} == once ]]; then limit=(-n 1); fi
	taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$p" -d "$qf" "${limit[@]}" \
		-c "$CLIENTS" -q "$OUTSTANDING" "$@" 2>&1 || die "dnsperf failed: $(head -1 "$qf")"
}

# qps_of SECONDS|once QUERYFILE PORT [DNSPERF-ARGS...]: queries per second;
# a SERVFAIL fails the run.
qps_of() {
	local out qps
	out=$(run_dnsperf "$@")
	qps=$(sed -n 's/^ *Queries per second: *//p' <<<"$out")
	[[ -n $qps ]] || die "no QPS in dnsperf's output: $out"
	if sed -n 's/^ *Response codes: *//p' <<<"$out" | grep -q SERVFAIL; then
		die "SERVFAIL replies ($(head -1 "$2")): $out"
	fi
	printf '%.0f\n' "$qps"
}

median() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.0f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# perf SECONDS KIND SERVER: qps_of for KIND against the server under test,
# with the option for dnsplane.
perf() {
	local extra=()
	if [[ $3 == dnsplane ]]; then extra=(-E "$option"); fi
	qps_of "$1" "$work/q-$3-$2" "$port" "${extra[@]}"
}

fill() {
	log "filling the namespace fill to $1 pods..."
	"$work/podfill" --kubeconfig "$kubeconfig" --namespace fill --count "$1" --clients 8 >&2
}

declare -A qps rss e2e

log "server on CPU $SERVER_CPU (GOMAXPROCS=1), dnsperf on CPU $CLIENT_CPU; dnsperf -c $CLIENTS -q $OUTSTANDING;" \
	"load average: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS

# qps_rounds: ROUNDS rounds, alternating which server goes first.
qps_rounds() {
	local r s kind v order
	for r in $(seq "$ROUNDS"); do
		order="stock dnsplane"
		if ((r % 2 == 0)); then order="dnsplane stock"; fi
		for s in $order; do
			log "round $r: $s"
			start_server "$s"
			check_answers "$s"
			for kind in "${KINDS[@]}"; do
				perf 1 "$kind" "$s" >/dev/null
				v=$(perf "$DURATION" "$kind" "$s")
				log "  $kind: $v QPS"
				qps[$kind|$s]="${qps[$kind|$s]:-}${qps[$kind|$s]:+ }$v"
			done
			stop_server
		done
	done
}

# rss_pass N: each server's RSS after 2 s of every kind.
rss_pass() {
	local s kind
	for s in stock dnsplane; do
		start_server "$s"
		for kind in "${KINDS[@]}"; do perf 2 "$kind" "$s" >/dev/null; done
		rss[$1|$s]=$(awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$server_pid/status")
		log "  $1 pods, $s: ${rss[$1|$s]} MB"
		stop_server
	done
}

# 1 and 2: pods are only added, so PODS must be ascending; the QPS rounds
# run when the count reaches PODS_QPS.
[[ " $PODS " == *" $PODS_QPS "* ]] || die "PODS_QPS ($PODS_QPS) must be one of PODS ($PODS)"
for n in $PODS; do
	fill "$n"
	rss_pass "$n"
	if ((n == PODS_QPS)); then qps_rounds; fi
done

# 3. End to end through a node cache.
for s in stock dnsplane; do
	start_server "$s"
	for phase in cold warm; do
		case $s in
		dnsplane)
			"$work/dnsplane" nodecache --listen "127.0.0.1:$cache_port" --cluster-dns "127.0.0.1:$port" \
				--upstream-resolv-conf "$work/resolv.conf" \
				--log-level warn >"$work/nodecache.log" 2>&1 &
			;;
		stock)
			"$coredns" -conf "$work/Corefile.stockcache" -quiet >"$work/nodecache.log" 2>&1 &
			;;
		esac
		cache_pid=$!
		ready=
		for _ in $(seq 300); do
			if dig +time=1 +tries=1 +short @127.0.0.1 -p "$cache_port" "$(cut -d' ' -f1 "$work/q-$s-service")" A 2>/dev/null | grep -qxF "$svc1"; then
				ready=1
				break
			fi
			sleep 0.1
		done
		[[ -n $ready ]] || die "the $s node cache did not answer: $(cat "$work/nodecache.log")"
		if [[ $phase == cold ]]; then
			v=$(qps_of once "$work/q-$s-cold" "$cache_port")
		else
			qps_of 1 "$work/q-$s-external" "$cache_port" >/dev/null
			v=$(qps_of "$DURATION" "$work/q-$s-external" "$cache_port")
		fi
		log "  through the node cache, $phase, $s: $v QPS"
		e2e[$phase|$s]=$v
		stop "$cache_pid"
		cache_pid=
	done
	stop_server
done
log "done in $((SECONDS - start)) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }

echo
echo "QPS with $PODS_QPS pods, $ROUNDS rounds of ${DURATION}s; medians; ratio = dnsplane / stock"
printf '%-9s %-24s %-24s %8s %8s %6s\n' kind "stock per round" "dnsplane per round" stock dnsplane ratio
for kind in "${KINDS[@]}"; do
	# shellcheck disable=SC2086 # word splitting of the rounds is intended
	a=$(median ${qps[$kind|stock]})
	# shellcheck disable=SC2086
	b=$(median ${qps[$kind|dnsplane]})
	printf '%-9s %-24s %-24s %8s %8s %6s\n' "$kind" "${qps[$kind|stock]}" "${qps[$kind|dnsplane]}" "$a" "$b" "$(ratio "$a" "$b")"
done
echo
echo "RSS (MB) after 2 s of each kind"
printf '%-8s %8s %8s\n' pods stock dnsplane
for n in $PODS; do
	printf '%-8s %8s %8s\n' "$n" "${rss[$n|stock]}" "${rss[$n|dnsplane]}"
done
echo
echo "Through a node cache (cold: $COLD_NAMES distinct external names, once; warm: example.com for ${DURATION}s)"
printf '%-6s %8s %8s %6s\n' phase stock dnsplane ratio
for phase in cold warm; do
	printf '%-6s %8s %8s %6s\n' "$phase" "${e2e[$phase|stock]}" "${e2e[$phase|dnsplane]}" "$(ratio "${e2e[$phase|stock]}" "${e2e[$phase|dnsplane]}")"
done
