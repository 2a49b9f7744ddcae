#!/usr/bin/env bash
# Pod creates against kube-apiserver (issue 32, item 4): `dnsplane apiserver`
# and, when KUBE_APISERVER is set, kube-apiserver 1.37.2 built from our go.mod,
# side by side in one run, each over its own fresh etcd (same Debian etcd,
# same flags, no fsync: bench/lib.sh start_etcd), both with
# --authorization-mode Node,RBAC and their default admission (kube: its
# default plugins plus NodeRestriction, as kubeadm; dnsplane: its own, see
# docs/apiserver.md), the same --token-auth-file and the same admin user
# (system:masters). On each it creates the namespace bench and, with kubectl,
# the ServiceAccount bench/default: kube's ServiceAccount admission refuses a
# pod whose ServiceAccount is missing, and kube's serviceaccount controller,
# which does not run here, would make the same object.
#
# Then, with bench/apiload (--op create, CLIENTS clients, namespace bench):
#   - ROUNDS rounds of PER_ROUND creates with fieldValidation Strict (what
#     kubectl --validate=strict, its default, sends) and PER_ROUND with Ignore,
#     per server: creates/s, p50, p99. Which server and which validation go
#     first alternates from round to round, as in authz.sh;
#   - etcd requests per create: etcd's own counters etcd_mvcc_range_total,
#     etcd_mvcc_put_total and etcd_mvcc_txn_total (from each etcd's /metrics)
#     right before and after a run of exactly 500 creates with 1 client,
#     divided by 500. A transaction's compare is read on its own and counted
#     as a range; etcd 3.4 counts a txn only when one transaction view does
#     more than one range, put or delete, which a create does not. The deltas also hold apiload's two setup GETs of the
#     namespace and whatever the server does by itself during the run
#     (leases, kube's object count poll): a few per run, < 0.01 per create;
#   - VmRSS (/proc/PID/status) of each API server after all those creates,
#     and after topping each up to TOTAL pods in bench (no top-up if it holds
#     TOTAL already); the pod counts are printed (from a list, after the RSS
#     is read, so that the list's own memory is not in it).
# The summary gives, per figure, kube | dnsplane | dnsplane/kube: creates/s
# as the median (each round's value), and its ratio as the median
# (min-max) of the per-round ratios (both servers ran in the same round, one
# after the other); p50/p99 as medians over rounds and the ratio of those.
#
#   bench/createpath.sh                                    # dnsplane alone
#   KUBE_APISERVER=/tmp/kube-apiserver bench/createpath.sh # side by side
#   KUBE_APISERVER=/tmp/kube-apiserver DNSPLANE=/tmp/dnsplane TOTAL=30000 BIND=127.0.75.1 bench/createpath.sh
#
# kube-apiserver is built once from our go.mod:
# `go build -o /tmp/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver`.
set -euo pipefail

ROUNDS=${ROUNDS:-2}
PER_ROUND=${PER_ROUND:-1500}
CLIENTS=${CLIENTS:-8}
TOTAL=${TOTAL:-6000}
BIND=${BIND:-127.0.0.1}
KUBE_APISERVER=${KUBE_APISERVER:-}
# dnsplane apiserver runs the namespace and garbage collector controllers
# in its own process by default; kube-apiserver runs none (they are
# kube-controller-manager's, which does not run here). Off by default, so
# that both processes do the same work; DNSPLANE_CONTROLLERS= (empty) keeps
# dnsplane's default.
DNSPLANE_CONTROLLERS=${DNSPLANE_CONTROLLERS--namespace-controller,-garbage-collector-controller}
# ETCD_CREATES is fixed, not a knob: the counters' deltas are divided by it,
# so the run must make exactly this many creates (apiload's --max-requests,
# one client, no errors).
ETCD_CREATES=500

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM

script=createpath.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
require_apiserver_tools
dnsplane=$(dnsplane_binary)

# One tokens file for both servers, so that each authenticates the same
# admin the same way.
cat >"$work/tokens.csv" <<EOF
admin-token,bench-admin,bench-admin-uid,system:masters
EOF

# Per server: its admin kubeconfig, its etcd's URL and its process.
declare -A kc etcd_of pid_of

# start_server NAME: starts NAME (dnsplane or kube) over a fresh etcd with
# Node,RBAC, and creates the namespace bench and its default ServiceAccount.
start_server() {
	local name=$1 dir pid k
	dir=$(mktemp -d "$work/$name.XXXXXX")
	start_etcd "$dir"
	etcd_of[$name]=$etcd_url
	case $name in
	dnsplane)
		: >"$dir/server.out"
		"$dnsplane" apiserver --data-dir "$dir/data" --secure-port 0 --bind-address "$BIND" \
			--etcd-servers "$etcd_url" --log-level warn --token-auth-file "$work/tokens.csv" \
			--authorization-mode Node,RBAC ${DNSPLANE_CONTROLLERS:+--controllers "$DNSPLANE_CONTROLLERS"} \
			>"$dir/server.out" 2>"$dir/server.out.err" &
		pid=$!
		pids+=("$pid")
		k=$(wait_line "$dir/server.out" 's/^kubeconfig: //p' "$pid" "dnsplane apiserver")
		# The printed kubeconfig's admin is as privileged as the tokens
		# file's; the file's is used so that both servers see one user.
		cp "$k" "$dir/kubeconfig"
		kubectl --kubeconfig "$dir/kubeconfig" config set-credentials bench-admin --token admin-token >/dev/null
		kubectl --kubeconfig "$dir/kubeconfig" config set-context --current --user bench-admin >/dev/null
		kc[$name]=$dir/kubeconfig
		pid_of[$name]=$pid
		;;
	kube)
		# kubeadm's admission: kube's default plugins plus NodeRestriction.
		start_kube "$dir" "$work/tokens.csv" admin-token --authorization-mode Node,RBAC \
			--enable-admission-plugins NodeRestriction
		kc[$name]=$kubeconfig
		pid_of[$name]=$server_pid
		;;
	esac
	kubectl --kubeconfig "${kc[$name]}" create namespace bench >/dev/null
	kubectl --kubeconfig "${kc[$name]}" -n bench get serviceaccount default >/dev/null 2>&1 ||
		kubectl --kubeconfig "${kc[$name]}" -n bench create serviceaccount default >/dev/null
}

# load NAME N CLIENTS VALIDATION: apiload creates N pods in bench on NAME
# with CLIENTS clients and fieldValidation VALIDATION; sets line to its
# output line. The duration is long enough for N to end the run.
load() {
	line=$("$work/apiload" --kubeconfig "${kc[$1]}" --op create --max-requests "$2" --clients "$3" \
		--field-validation "$4" --namespace bench --duration 1h 2>"$work/apiload.err") ||
		die "apiload against $1 failed: $(cat "$work/apiload.err")"
	if [[ $(field errors) != 0 ]]; then
		log "$1: $(field errors) errors of $(field requests): $(grep 'error:' "$work/apiload.err" || true)"
	fi
}

# field KEY: KEY's value in line (apiload's key=value output), without a
# trailing "ms".
field() {
	awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { sub(/ms$/, "", kv[2]); print kv[2] } } }' <<<"$line"
}

# etcd_counts NAME: "ranges puts txns" of NAME's etcd (txns "-" if this etcd
# has no etcd_mvcc_txn_total), summed over label sets.
etcd_counts() {
	curl -sf "${etcd_of[$1]}/metrics" | awk '
		function name(s) { sub(/\{.*/, "", s); return s }
		name($1) == "etcd_mvcc_range_total" { r += $NF }
		name($1) == "etcd_mvcc_put_total" { p += $NF }
		name($1) == "etcd_mvcc_txn_total" { t += $NF; tx = 1 }
		END { printf "%.0f %.0f %s\n", r, p, tx ? sprintf("%.0f", t) : "-" }'
}

# rss_mib NAME: NAME's VmRSS in MiB.
rss_mib() {
	awk '/^VmRSS:/ { printf "%.0f\n", $2 / 1024 }' "/proc/${pid_of[$1]}/status"
}

# rss_split NAME: NAME's RssAnon and RssFile in MiB ("anon/file"): the
# heap and stacks, and the pages of its binary it has touched.
rss_split() {
	awk '/^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 } END { printf "%.0f/%.0f\n", a / 1024, f / 1024 }' "/proc/${pid_of[$1]}/status"
}

# pod_count NAME: the pods in bench, by a list (kubectl pages it).
pod_count() {
	kubectl --kubeconfig "${kc[$1]}" -n bench get pods -o name | wc -l
}

servers=(dnsplane)
[[ -n $KUBE_APISERVER ]] && servers+=(kube)
for s in "${servers[@]}"; do
	log "starting $s..."
	start_server "$s"
done

echo "# $(date -u '+%F %T UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $(etcd --version | head -1)"
echo "# ROUNDS=$ROUNDS PER_ROUND=$PER_ROUND CLIENTS=$CLIENTS TOTAL=$TOTAL DNSPLANE_CONTROLLERS=$DNSPLANE_CONTROLLERS; dnsplane $dnsplane${KUBE_APISERVER:+, kube-apiserver $KUBE_APISERVER}"

# results: one line per timed run: server round validation rps p50 p99 errors.
results=$work/results
: >"$results"
for round in $(seq "$ROUNDS"); do
	order=("${servers[@]}") validations=(Strict Ignore)
	if ((round % 2 == 0)); then
		validations=(Ignore Strict)
		if ((${#servers[@]} == 2)); then order=("${servers[1]}" "${servers[0]}"); fi
	fi
	for v in "${validations[@]}"; do
		for s in "${order[@]}"; do
			log "round $round: $s, $v, $PER_ROUND creates, $CLIENTS clients"
			load "$s" "$PER_ROUND" "$CLIENTS" "$v"
			echo "$s $round $v $(field rps) $(field p50) $(field p99) $(field errors)" >>"$results"
		done
	done
done

echo
echo "timed runs: $PER_ROUND pod creates each, $CLIENTS clients"
printf '%-9s %5s %-10s %9s %9s %9s %7s\n' server round validation creates/s p50_ms p99_ms errors
while read -r s round v rps p50 p99 errors; do
	printf '%-9s %5s %-10s %9s %9s %9s %7s\n' "$s" "$round" "$v" "$rps" "$p50" "$p99" "$errors"
done <"$results"

# etcd requests per create: counters right before and after exactly
# ETCD_CREATES creates by one client.
declare -A per_create
echo
echo "etcd requests during $ETCD_CREATES creates, 1 client (etcd's own counters; deltas, then per create)"
printf '%-9s %8s %8s %8s %12s %12s %12s\n' server ranges puts txns ranges/create puts/create txns/create
for s in "${servers[@]}"; do
	log "$s: $ETCD_CREATES creates, 1 client, etcd counters around them"
	before=$(etcd_counts "$s")
	load "$s" "$ETCD_CREATES" 1 Strict
	after=$(etcd_counts "$s")
	if [[ $(field requests) != "$ETCD_CREATES" || $(field errors) != 0 ]]; then
		die "$s: the etcd run made $(field requests) requests with $(field errors) errors, not $ETCD_CREATES creates"
	fi
	read -r dr dp dt rr rp rt < <(awk -v b="$before" -v a="$after" -v n="$ETCD_CREATES" 'BEGIN {
		split(b, x); split(a, y)
		for (i = 1; i <= 3; i++) {
			if (x[i] == "-" || y[i] == "-") { d[i] = "-"; q[i] = "-" } else { d[i] = y[i] - x[i]; q[i] = sprintf("%.2f", d[i] / n) }
		}
		print d[1], d[2], d[3], q[1], q[2], q[3]
	}')
	per_create[$s|ranges]=$rr per_create[$s|puts]=$rp per_create[$s|txns]=$rt
	printf '%-9s %8s %8s %8s %12s %12s %12s\n' "$s" "$dr" "$dp" "$dt" "$rr" "$rp" "$rt"
done

# RSS after every create so far, then after topping up to TOTAL pods.
declare -A rss pods
for s in "${servers[@]}"; do
	rss[$s|rounds]=$(rss_mib "$s")
	pods[$s|rounds]=$(pod_count "$s")
done
for s in "${servers[@]}"; do
	need=$((TOTAL - pods[$s|rounds]))
	if ((need > 0)); then
		log "$s: topping up to $TOTAL pods ($need creates)"
		load "$s" "$need" "$CLIENTS" Strict
	fi
	rss[$s|total]=$(rss_mib "$s")
	pods[$s|total]=$(pod_count "$s")
done
echo
echo "VmRSS of the API server (MiB)"
printf '%-9s %-30s %-30s\n' server 'after the rounds' "after topping up to $TOTAL"
for s in "${servers[@]}"; do
	printf '%-9s %-30s %-30s\n' "$s" "${rss[$s|rounds]} (${pods[$s|rounds]} pods)" "${rss[$s|total]} (${pods[$s|total]} pods)"
done
echo "RssAnon/RssFile at the end (MiB): the heap and stacks / the touched pages of the binary"
for s in "${servers[@]}"; do
	printf '%-9s %s\n' "$s" "$(rss_split "$s")"
done

# column SERVER VALIDATION FIELD: FIELD (4 creates/s, 5 p50, 6 p99) of those
# runs, one per round, in round order.
column() {
	awk -v s="$1" -v v="$2" -v f="$3" '$1 == s && $3 == v { print $2, $f }' "$results" | sort -n | cut -d' ' -f2
}

# median: the median of the numbers on stdin, one a line ("-" if none).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

# rate_cell SERVER VALIDATION: "median (round 1, round 2, ...)" of creates/s.
rate_cell() {
	local vals
	vals=$(column "$1" "$2" 4)
	[[ -z $vals ]] && { echo -; return; }
	printf '%.0f (%s)\n' "$(median <<<"$vals")" "$(awk '{ printf "%s%.0f", (NR > 1 ? ", " : ""), $1 }' <<<"$vals")"
}

# rate_ratio VALIDATION: the median (min-max) of the per-round ratios
# dnsplane/kube of creates/s.
rate_ratio() {
	paste -d' ' <(column dnsplane "$1" 4) <(column kube "$1" 4) | awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | median_range %.2f
}

# lat SERVER VALIDATION: the median p50 and p99 (ms) over rounds, "p50/p99".
lat() {
	local p50 p99
	p50=$(column "$1" "$2" 5 | median)
	p99=$(column "$1" "$2" 6 | median)
	if [[ $p50 == - ]]; then echo -; else printf '%.1f/%.1f\n' "$p50" "$p99"; fi
}

# ratio A B: A/B to two decimals, "-" unless both are numbers and B > 0.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f\n", a / b; else print "-"
	}'
}

# lat_ratio VALIDATION: dnsplane/kube of the median p50 and of the median p99.
lat_ratio() {
	local d k
	d=$(lat dnsplane "$1")
	k=$(lat kube "$1")
	if [[ $k == - ]]; then echo -; else echo "$(ratio "${d%/*}" "${k%/*}")/$(ratio "${d#*/}" "${k#*/}")"; fi
}

# rss_cell SERVER rounds|total: "MiB (N pods)", and whether the top-up had
# nothing to do (the rounds had made TOTAL pods or more).
rss_cell() {
	local note=""
	if [[ $2 == total ]] && ((pods[$1|rounds] >= TOTAL)); then note=", no top-up"; fi
	echo "${rss[$1|$2]} (${pods[$1|$2]} pods$note)"
}

# row LABEL KUBE DNSPLANE RATIO
row() { printf '%-42s | %-28s | %-28s | %s\n' "$@"; }

echo
echo "summary: median over $ROUNDS rounds (each round's value); ratio = dnsplane/kube (creates/s: above 1 is faster,"
echo "the median (min-max) of the per-round ratios; latency, etcd requests, RSS: below 1 is less)"
row '' kube-apiserver dnsplane dnsplane/kube
row '' ---------------------------- ---------------------------- -------------
for v in Strict Ignore; do
	row "creates/s, $v, ${ROUNDS}x$PER_ROUND, $CLIENTS clients" "$(rate_cell kube "$v")" "$(rate_cell dnsplane "$v")" "$(rate_ratio "$v")"
done
for v in Strict Ignore; do
	row "p50/p99 ms, $v" "$(lat kube "$v")" "$(lat dnsplane "$v")" "$(lat_ratio "$v")"
done
for c in ranges puts txns; do
	row "etcd $c per create ($ETCD_CREATES, 1 client)" "${per_create[kube|$c]:--}" "${per_create[dnsplane|$c]:--}" \
		"$(ratio "${per_create[dnsplane|$c]:--}" "${per_create[kube|$c]:--}")"
done
for at in rounds total; do
	label="RSS MiB after the rounds"
	[[ $at == total ]] && label="RSS MiB after topping up to $TOTAL pods"
	k=- d=$(rss_cell dnsplane "$at")
	[[ -n $KUBE_APISERVER ]] && k=$(rss_cell kube "$at")
	row "$label" "$k" "$d" "$(ratio "${rss[dnsplane|$at]}" "${rss[kube|$at]:--}")"
done
