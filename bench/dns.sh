#!/usr/bin/env bash
# DNS throughput with dnsperf, on 127.0.0.1 only:
#
#  a. `dnsplane dns --conf` against stock CoreDNS (`coredns -conf`) with the
#     same Corefile: (i) a cached forwarded name, (ii) a Service answered by
#     the kubernetes plugin (not cached). Each server runs alone, the two
#     alternate, ROUNDS rounds of DURATION seconds each.
#  b. `dnsplane dns` with searchexpand: an autopath name expanded with the
#     node cache's search list option, the same name without the option
#     (derived list), and the plain Service name, in rotating order.
#  c. The Corefile the DNS operator renders (`dnsplane corefile -f`, with
#     searchexpand in the `.` block): stock CoreDNS (which cannot load
#     searchexpand, so the same Corefile without it), `dnsplane dns` with the
#     same file without searchexpand, and `dnsplane dns` with the operator's
#     file as is, in rotating order. Queries: a cached forwarded name and a
#     cached Service (what searchexpand costs every other name), and on the
#     server with searchexpand an autopath name answered from its answer
#     cache, with and without the node cache's option, against the cached
#     Service with and without EDNS0.
#
# It installs dnsperf and dig (apt-get) and stock CoreDNS v1.15.0
# (go install) when missing, builds dnsplane and bench/dnsupstream into a
# temp dir, starts `dnsplane apiserver` (embedded etcd, temp data dir),
# creates the Service ns1/svc1 with kubectl, starts bench/dnsupstream as the
# upstream resolver, prints a table, and stops every process it started on
# exit.
#
# The DNS server under test is pinned to CPU $SERVER_CPU with GOMAXPROCS=1,
# dnsperf to CPU $CLIENT_CPU (taskset), so that the two do not fight for a
# core; other load on the machine still shows in the numbers.
#
#   bash bench/dns.sh
#   ROUNDS=5 DURATION=20 bash bench/dns.sh
#   CASES=b bash bench/dns.sh          # only the autopath case
#   CASES=c bash bench/dns.sh          # only the operator's Corefile
#   DNSPLANE=/tmp/dnsplane-old bash bench/dns.sh  # measure that binary
set -euo pipefail
shopt -s inherit_errexit # command substitutions fail like the rest

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}        # seconds per dnsperf run
CLIENTS=${CLIENTS:-4}           # dnsperf -c
OUTSTANDING=${OUTSTANDING:-100} # dnsperf -q
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CASES=${CASES:-"a b c"}
DNSPLANE=${DNSPLANE:-} # a dnsplane binary to measure instead of building ./cmd/dnsplane

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()     # long-running helpers: the API server, the upstream
server_pid= # the DNS server under test, when one runs

trap cleanup EXIT
trap 'exit 130' INT TERM

script=dns.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

# --- tools -------------------------------------------------------------------

require_tools

if [[ -n $DNSPLANE ]]; then
	# A dnsplane built elsewhere, e.g. from an earlier commit for a before
	# and after comparison with the same script.
	log "using $DNSPLANE; building dnsupstream..."
	cp "$DNSPLANE" "$work/dnsplane"
	(cd "$repo" && go build -o "$work/dnsupstream" ./bench/dnsupstream)
else
	log "building dnsplane and dnsupstream..."
	(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/dnsupstream" ./bench/dnsupstream)
fi
log "stock CoreDNS: $coredns ($("$coredns" -version | sed -n 1p))"

# free_port and wait_line are in bench/lib.sh.

# --- API server, Service, upstream -------------------------------------------

: >"$work/apiserver.out" # the background job opens it asynchronously
: >"$work/apiserver.out.err"
"$work/dnsplane" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
	--bind-address 127.0.0.1 --log-level warn >"$work/apiserver.out" 2>"$work/apiserver.out.err" &
pids+=($!)
kubeconfig=$(wait_line "$work/apiserver.out" 's/^kubeconfig: //p' "${pids[-1]}" "dnsplane apiserver")
context=$(kubectl --kubeconfig "$kubeconfig" config current-context)
kubectl --kubeconfig "$kubeconfig" create namespace ns1 >/dev/null
kubectl --kubeconfig "$kubeconfig" -n ns1 create service clusterip svc1 --tcp=80:80 >/dev/null
cluster_ip=$(kubectl --kubeconfig "$kubeconfig" -n ns1 get service svc1 -o 'jsonpath={.spec.clusterIP}')
[[ -n $cluster_ip ]] || die "ns1/svc1 has no ClusterIP"
log "API server: $(sed -n 1p "$work/apiserver.out"); ns1/svc1 has ClusterIP $cluster_ip"

: >"$work/upstream.out"
: >"$work/upstream.out.err"
"$work/dnsupstream" -zone example.com,corp.example -a example.com=93.184.216.34 \
	-a intranet.corp.example=10.9.9.9 >"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" "dnsupstream")
log "upstream resolver (bench/dnsupstream) at $upstream"

# --- queries and Corefiles ---------------------------------------------------

echo "example.com A" >"$work/q-external"
echo "svc1.ns1.svc.cluster.local A" >"$work/q-service"
echo "svc1.search.ns1.cluster.local.ap.k8s.io A" >"$work/q-autopath"
# Found only through the host search domain corp.example, i.e. only with the
# option: checks that searchexpand takes dnsperf's option.
echo "intranet.search.ns1.cluster.local.ap.k8s.io A" >"$work/q-intranet"
search_list="ns1.svc.cluster.local,svc.cluster.local,cluster.local,corp.example"
option="65534:$(printf %s "$search_list" | od -An -v -tx1 | tr -d ' \n')"

port=$(free_port)
# a: the forwarded names are cached; the cluster domain is served by its own
# server block, without cache, so every query reaches the kubernetes plugin.
cat >"$work/Corefile.compare" <<EOF
cluster.local:$port {
    bind 127.0.0.1
    errors
    kubernetes cluster.local {
        kubeconfig $kubeconfig $context
    }
}

.:$port {
    bind 127.0.0.1
    errors
    cache 30
    forward . $upstream
}
EOF
# b: the layout of docs/autopath.md (searchexpand runs before cache).
cat >"$work/Corefile.autopath" <<EOF
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

# c: the operator's Corefile for a DNS resource whose only setting is the
# upstream, served on $port with its health, ready and metrics endpoints
# moved to free loopback ports (their defaults belong to the host).
upstream_host=${upstream%:*} upstream_port=${upstream##*:}
cat >"$work/dns.yaml" <<EOF
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  upstreamResolvers:
    upstreams:
    - type: Network
      address: $upstream_host
      port: $upstream_port
EOF
"$work/dnsplane" corefile -f "$work/dns.yaml" --kubeconfig "$kubeconfig" --listen "127.0.0.1:$port" |
	sed -e "s/ :8080 / 127.0.0.1:$(free_port) /" -e "s/ :8181\$/ 127.0.0.1:$(free_port)/" \
		-e "s/ :9153\$/ 127.0.0.1:$(free_port)/" >"$work/Corefile.operator"
grep -q '^    searchexpand ' "$work/Corefile.operator" || die "no searchexpand in the operator's Corefile: $(cat "$work/Corefile.operator")"
if grep -Eq ' :(8080|8181|9153)' "$work/Corefile.operator"; then die "endpoints left on their default ports: $(cat "$work/Corefile.operator")"; fi
# The same without the searchexpand block, for stock CoreDNS and the peer run,
# and without loopguard and warmstack, which stock does not have either
# (loopguard sits right before forward, so cached answers never reach it;
# warmstack is what the operator's file has and the peer's has not).
awk '/^    (searchexpand|loopguard|warmstack)( |$)/{skip = /{$/; next} skip && /^    }$/{skip = 0; next} !skip' \
	"$work/Corefile.operator" >"$work/Corefile.operator-nose"
if grep -Eq 'searchexpand|loopguard|warmstack' "$work/Corefile.operator-nose"; then die "a plugin of ours left in the peer Corefile"; fi

# --- running servers and dnsperf ---------------------------------------------

# answers NAME WANT: whether the server on $port answers NAME A with the
# address WANT among its answers.
answers() {
	local out
	out=$(dig +time=1 +tries=1 +short @127.0.0.1 -p "$port" "$1" A 2>/dev/null || true)
	grep -qxF "$2" <<<"$out"
}

# start_server dnsplane|stock COREFILE: starts the server pinned to
# SERVER_CPU with GOMAXPROCS=1 and waits until it answers both the Service
# (the kubernetes plugin answers SERVFAIL until its informers synced) and a
# forwarded name.
start_server() {
	local kind=$1 corefile=$2
	case $kind in
	dnsplane)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/dnsplane" dns --conf "$corefile" \
			--reload-interval 0 --log-level warn >"$work/$kind.log" 2>&1 &
		;;
	stock)
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$coredns" -conf "$corefile" -quiet >"$work/$kind.log" 2>&1 &
		;;
	esac
	server_pid=$!
	for _ in $(seq 300); do
		kill -0 "$server_pid" 2>/dev/null || die "$kind exited: $(cat "$work/$kind.log")"
		if answers svc1.ns1.svc.cluster.local "$cluster_ip" && answers example.com 93.184.216.34; then
			return
		fi
		sleep 0.1
	done
	die "$kind did not answer svc1.ns1.svc.cluster.local and example.com within 30 s: $(cat "$work/$kind.log")"
}

stop_server() {
	stop "$server_pid"
	server_pid=
}

# run_dnsperf SECONDS|once QUERYFILE [DNSPERF-ARGS...]: runs dnsperf pinned to
# CLIENT_CPU (for SECONDS, or one pass over QUERYFILE) and prints its output.
run_dnsperf() {
	local limit=(-l "$1") qf=$2
	shift 2
	if [[ ${limit[1]} == once ]]; then limit=(-n 1); fi
	taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$qf" "${limit[@]}" \
		-c "$CLIENTS" -q "$OUTSTANDING" "$@" 2>&1 || die "dnsperf failed: $(cat "$qf")"
}

# codes DNSPERF-OUTPUT: the "Response codes:" value, e.g. "NOERROR 123 (100.00%)".
codes() { sed -n 's/^ *Response codes: *//p' <<<"$1"; }

# qps_of SECONDS QUERYFILE [DNSPERF-ARGS...]: runs dnsperf and prints its
# queries per second and the number of queries completed. Every reply must
# be NOERROR.
qps_of() {
	local out qps lost done
	out=$(run_dnsperf "$@")
	qps=$(sed -n 's/^ *Queries per second: *//p' <<<"$out")
	lost=$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' <<<"$out")
	done=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' <<<"$out")
	[[ -n $qps && -n $done ]] || die "no QPS in dnsperf's output: $out"
	[[ $(codes "$out") == "NOERROR "*"(100.00%)" ]] || die "replies other than NOERROR ($(cat "$2")): $(codes "$out")"
	if [[ $lost != 0 ]]; then log "  ($lost queries lost)"; fi
	printf '%.0f %s\n' "$qps" "$done"
}

# median VALUE...: the median, with the middle two of an even count averaged.
median() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# cpu_ticks: the CPU time (user + system, in clock ticks) the server under
# test has used so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
hz=$(getconf CLK_TCK)

declare -A qps # "<case>|<server>" -> space-separated QPS per round
declare -A cpu # "<case>|<server>" -> space-separated µs of server CPU per query per round

# measure CASE SERVER QUERYFILE [DNSPERF-ARGS...]: a 1 s warm-up, then one
# DURATION-second run, appended to qps[CASE|SERVER], and the server's CPU
# time per query during that run to cpu[CASE|SERVER]. Load from other
# processes on the server's core lowers the QPS of a run but hardly its CPU
# time per query, so the second is the steadier figure on a shared machine.
measure() {
	local c=$1 s=$2 qf=$3 v n t0 t1 us
	shift 3
	qps_of 1 "$qf" "$@" >/dev/null
	t0=$(cpu_ticks)
	v=$(qps_of "$DURATION" "$qf" "$@")
	read -r v n <<<"$v"
	t1=$(cpu_ticks)
	us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
	log "  $c, $s: $v QPS, $us µs of server CPU per query"
	qps[$c|$s]="${qps[$c|$s]:-}${qps[$c|$s]:+ }$v"
	cpu[$c|$s]="${cpu[$c|$s]:-}${cpu[$c|$s]:+ }$us"
}

log "server on CPU $SERVER_CPU (GOMAXPROCS=1), dnsperf on CPU $CLIENT_CPU; dnsperf -c $CLIENTS -q $OUTSTANDING;" \
	"$ROUNDS rounds of ${DURATION}s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS

rows=() # "<case>|<server>|<baseline case>|<baseline server>"
if [[ " $CASES " == *" a "* ]]; then
	for r in $(seq "$ROUNDS"); do
		# Alternate which server goes first.
		order="stock dnsplane"
		if ((r % 2 == 0)); then order="dnsplane stock"; fi
		for s in $order; do
			log "round $r: $s"
			start_server "$s" "$work/Corefile.compare"
			measure "a-i cached forward" "$s" "$work/q-external"
			measure "a-ii kubernetes service" "$s" "$work/q-service"
			stop_server
		done
	done
	rows+=("a-i cached forward|stock||" "a-i cached forward|dnsplane|a-i cached forward|stock")
	rows+=("a-ii kubernetes service|stock||" "a-ii kubernetes service|dnsplane|a-ii kubernetes service|stock")
fi
if [[ " $CASES " == *" b "* ]]; then
	for r in $(seq "$ROUNDS"); do
		log "round $r: dnsplane with searchexpand"
		start_server dnsplane "$work/Corefile.autopath"
		if ((r == 1)); then
			# The option must reach searchexpand: intranet is found through
			# corp.example only when the list comes from the option.
			got=$(codes "$(run_dnsperf once "$work/q-intranet" -E "$option")")
			[[ $got == "NOERROR 1 (100.00%)" ]] || die "intranet with the option: $got, want NOERROR"
			got=$(codes "$(run_dnsperf once "$work/q-intranet")")
			[[ $got == "NXDOMAIN 1 (100.00%)" ]] || die "intranet without the option: $got, want NXDOMAIN"
		fi
		# The option travels in an EDNS0 OPT record, which costs the server
		# (and every plugin below searchexpand) work of its own: the plain
		# service with EDNS0 is the like-for-like peer of the option case.
		kinds=(service service-edns option derived)
		# Rotate the order from round to round.
		for i in 0 1 2 3; do
			case ${kinds[$(((i + r - 1) % 4))]} in
			service) measure "b plain service" dnsplane "$work/q-service" ;;
			service-edns) measure "b plain service, EDNS0" dnsplane "$work/q-service" -e ;;
			option) measure "b autopath, option" dnsplane "$work/q-autopath" -E "$option" ;;
			derived) measure "b autopath, derived" dnsplane "$work/q-autopath" ;;
			esac
		done
		stop_server
	done
	rows+=("b plain service|dnsplane||")
	rows+=("b plain service, EDNS0|dnsplane|b plain service|dnsplane")
	rows+=("b autopath, option|dnsplane|b plain service|dnsplane")
	rows+=("b autopath, option|dnsplane|b plain service, EDNS0|dnsplane")
	rows+=("b autopath, derived|dnsplane|b plain service|dnsplane")
fi
if [[ " $CASES " == *" c "* ]]; then
	# stock and dnsplane serve the file without searchexpand, dnsplane+se
	# the operator's file.
	servers=(stock dnsplane dnsplane+se)
	for r in $(seq "$ROUNDS"); do
		# Rotate which server goes first.
		for i in 0 1 2; do
			s=${servers[$(((i + r - 1) % 3))]}
			log "round $r: $s, operator's Corefile"
			case $s in
			stock) start_server stock "$work/Corefile.operator-nose" ;;
			dnsplane) start_server dnsplane "$work/Corefile.operator-nose" ;;
			dnsplane+se) start_server dnsplane "$work/Corefile.operator" ;;
			esac
			measure "c cached forward" "$s" "$work/q-external"
			measure "c cached service" "$s" "$work/q-service"
			if [[ $s == dnsplane+se ]]; then
				measure "c cached service, EDNS0" "$s" "$work/q-service" -e
				measure "c autopath answer cache" "$s" "$work/q-autopath"
				measure "c autopath cache, option" "$s" "$work/q-autopath" -E "$option"
			fi
			stop_server
		done
	done
	for c in "c cached forward" "c cached service"; do
		rows+=("$c|stock||" "$c|dnsplane|$c|stock" "$c|dnsplane+se|$c|stock" "$c|dnsplane+se|$c|dnsplane")
	done
	rows+=("c cached service, EDNS0|dnsplane+se||")
	rows+=("c autopath answer cache|dnsplane+se|c cached service|dnsplane+se")
	rows+=("c autopath cache, option|dnsplane+se|c cached service, EDNS0|dnsplane+se")
fi
log "done in $((SECONDS - start)) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# table TITLE ARRAY FORMAT INVERT: one row per entry of rows: the values
# of each round, their median and the ratio of medians to the baseline's.
# INVERT=1 divides the baseline by the row (CPU per query: above 1 is
# cheaper, as a QPS ratio above 1 is faster).
table() {
	local title=$1 fmt=$3 invert=$4 row c s bc bs m bm ratio of
	local -n values=$2
	echo
	printf '%-26s %-11s %-34s %9s %6s  %s\n' case server "$title per round" median ratio "ratio of medians"
	for row in "${rows[@]}"; do
		IFS='|' read -r c s bc bs <<<"$row"
		# shellcheck disable=SC2086 # word splitting of the rounds is intended
		m=$(median ${values[$c|$s]})
		ratio="" of=""
		if [[ -n $bc ]]; then
			# shellcheck disable=SC2086
			bm=$(median ${values[$bc|$bs]})
			ratio=$(awk -v a="$m" -v b="$bm" -v inv="$invert" 'BEGIN { printf "%.2f", inv ? b / a : a / b }')
			if [[ $bc == "$c" ]]; then of="$s / $bs"; else of="/ $bc"; fi
		fi
		printf "%-26s %-11s %-34s $fmt %6s  %s\n" "$c" "$s" "${values[$c|$s]}" "$m" "$ratio" "$of"
	done
}
table "QPS" qps '%9.0f' 0
table "CPU µs/query" cpu '%9.2f' 1
