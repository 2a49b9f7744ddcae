#!/usr/bin/env bash
# What authorization costs on the create path: `dnsplane apiserver` with
# --authorization-mode Node,RBAC (the default) and with AlwaysAllow and, when
# KUBE_APISERVER is set, kube-apiserver 1.37 with the same two modes (and
# NodeRestriction admission, as kubeadm), each over its own fresh etcd (same
# flags, no fsync: bench/lib.sh start_etcd) and the same --token-auth-file,
# loaded in turn by apiload with pod creates, as
#   - the admin (system:masters: allowed before any mode is asked), and
#   - a token user that a RoleBinding lets create pods (RBAC walks the
#     bindings: the cost of a real user),
# ROUNDS times. Every round runs every (server, mode, user) once, alternating
# dnsplane and kube from one run to the next (and which server and which
# mode go first from one round to the next) so that all see the same
# machine. The summary gives the median creates/s and range per (server,
# mode, user), and the ratios Node,RBAC/AlwaysAllow per server and
# dnsplane/kube per mode, taken within a round (both sides of a ratio ran
# one after the other) then medianed over rounds.
# For kube-apiserver it also gives the authorization step alone: the mean of
# its authorization_duration_seconds over each run, from /metrics.
# dnsplane has no such metric: FILTER_BENCH=1 runs internal/authz's
# BenchmarkFilter for it (a test build).
#
#   bench/authz.sh                         # 10 s per run, 4 clients, 3 rounds
#   DURATION=5s CLIENTS=8 ROUNDS=3 bench/authz.sh
#   KUBE_APISERVER=/tmp/kube-apiserver DNSPLANE=/tmp/dnsplane BIND=127.0.75.1 bench/authz.sh
#
# kube-apiserver is built once from a scratch module with our go.mod:
# `go build -o /tmp/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver`.
set -euo pipefail

DURATION=${DURATION:-10s}
CLIENTS=${CLIENTS:-4}
ROUNDS=${ROUNDS:-3}
BIND=${BIND:-127.0.0.1}
KUBE_APISERVER=${KUBE_APISERVER:-}
FILTER_BENCH=${FILTER_BENCH:-}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM

script=authz.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
require_apiserver_tools
dnsplane=$(dnsplane_binary)

# One tokens file for every server, so that each authenticates the same two
# users the same way.
cat >"$work/tokens.csv" <<EOF
admin-token,bench-admin,bench-admin-uid,system:masters
loader-token,loader,loader-uid
EOF

declare -A admin_kc loader_kc metrics_url

# start_server NAME: NAME is SERVER-MODE (dnsplane-rbac, kube-allow, ...);
# starts it over a fresh etcd and sets admin_kc[NAME] (and metrics_url[NAME]
# for kube).
start_server() {
	local name=$1 mode dir kc pid
	case $name in
	*-rbac) mode=Node,RBAC ;;
	*-allow) mode=AlwaysAllow ;;
	esac
	dir=$(mktemp -d "$work/$name.XXXXXX")
	start_etcd "$dir"
	case $name in
	dnsplane-*)
		: >"$dir/server.out"
		"$dnsplane" apiserver --data-dir "$dir/data" --secure-port 0 --bind-address "$BIND" \
			--etcd-servers "$etcd_url" --log-level warn --token-auth-file "$work/tokens.csv" \
			--authorization-mode "$mode" >"$dir/server.out" 2>"$dir/server.out.err" &
		pid=$!
		pids+=("$pid")
		kc=$(wait_line "$dir/server.out" 's/^kubeconfig: //p' "$pid" "dnsplane apiserver ($mode)")
		# The printed kubeconfig's admin is as privileged as the tokens
		# file's; the file's is used so that every server sees one user.
		cp "$kc" "$dir/kubeconfig"
		kubectl --kubeconfig "$dir/kubeconfig" config set-credentials bench-admin --token admin-token >/dev/null
		kubectl --kubeconfig "$dir/kubeconfig" config set-context --current --user bench-admin >/dev/null
		admin_kc[$name]=$dir/kubeconfig
		;;
	kube-*)
		# kubeadm's admission: kube's default plugins plus NodeRestriction.
		start_kube "$dir" "$work/tokens.csv" admin-token --authorization-mode "$mode" \
			--enable-admission-plugins NodeRestriction
		admin_kc[$name]=$kubeconfig
		metrics_url[$name]=$server_url/metrics
		;;
	esac
}

# setup NAME: the loader's kubeconfig (admin's with the loader's token) and
# the objects that let it create pods in namespace bench, the same on every
# server (on AlwaysAllow the binding is not needed, but costs nothing).
setup() {
	local admin=${admin_kc[$1]} kc=${admin_kc[$1]}.loader
	cp "$admin" "$kc"
	kubectl --kubeconfig "$kc" config set-credentials loader --token loader-token >/dev/null
	kubectl --kubeconfig "$kc" config set-context --current --user loader >/dev/null
	kubectl --kubeconfig "$admin" create namespace bench >/dev/null
	# kube's ServiceAccount admission refuses a pod whose ServiceAccount
	# does not exist, and no controller runs here to create "default".
	kubectl --kubeconfig "$admin" -n bench get serviceaccount default >/dev/null 2>&1 ||
		kubectl --kubeconfig "$admin" -n bench create serviceaccount default >/dev/null
	kubectl --kubeconfig "$admin" create clusterrole pod-loader --verb=get,create --resource=pods,namespaces >/dev/null
	kubectl --kubeconfig "$admin" -n bench create rolebinding loader --clusterrole=pod-loader --user=loader >/dev/null
	loader_kc[$1]=$kc
}

# authz_totals NAME: the sum and count of kube's
# authorization_duration_seconds over all results.
authz_totals() {
	curl -sk -H "Authorization: Bearer admin-token" "${metrics_url[$1]}" | awk '
		/^authorization_duration_seconds_sum/ { s += $NF }
		/^authorization_duration_seconds_count/ { c += $NF }
		END { printf "%.9f %d\n", s, c }'
}

servers=(dnsplane)
[[ -n $KUBE_APISERVER ]] && servers+=(kube)
for s in "${servers[@]}"; do
	for m in rbac allow; do
		log "starting $s with ${m}..."
		start_server "$s-$m"
		setup "$s-$m"
	done
done

# results: one line per run: server mode user round rps p50 p99 authz_us.
results=$work/results
: >"$results"
for round in $(seq "$ROUNDS"); do
	# Who goes first alternates from round to round, as does the mode.
	order=("${servers[@]}") modes=(rbac allow)
	if ((round % 2 == 0)); then
		modes=(allow rbac)
		if ((${#servers[@]} == 2)); then order=("${servers[1]}" "${servers[0]}"); fi
	fi
	for user in admin loader; do
		for m in "${modes[@]}"; do
			for s in "${order[@]}"; do
				name=$s-$m
				if [[ $user == admin ]]; then kc=${admin_kc[$name]}; else kc=${loader_kc[$name]}; fi
				mode=AlwaysAllow
				if [[ $m == rbac ]]; then mode=Node,RBAC; fi
				log "round $round: $s, $mode, as $user"
				before="0 0"
				if [[ $s == kube ]]; then before=$(authz_totals "$name"); fi
				line=$("$work/apiload" --kubeconfig "$kc" --op create --clients "$CLIENTS" --duration "$DURATION" --namespace bench 2>/dev/null)
				authz_us=-
				if [[ $s == kube ]]; then
					authz_us=$(awk -v b="$before" -v a="$(authz_totals "$name")" 'BEGIN {
						split(b, x); split(a, y)
						if (y[2] > x[2]) printf "%.1f", (y[1] - x[1]) / (y[2] - x[2]) * 1e6; else print "-"
					}')
				fi
				awk -v pre="$s $mode $user $round" -v az="$authz_us" '{
					for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
					if (v["errors"] != 0) printf "%s: %s errors\n", pre, v["errors"] > "/dev/stderr"
					print pre, v["rps"], v["p50"], v["p99"], az
				}' <<<"$line" >>"$results"
			done
		done
	done
done

echo
printf '%-9s %-12s %-7s %5s %9s %10s %10s %9s\n' server mode user round req/s p50 p99 authz_µs
while read -r s mode user round rps p50 p99 az; do
	printf '%-9s %-12s %-7s %5s %9s %10s %10s %9s\n' "$s" "$mode" "$user" "$round" "$rps" "$p50" "$p99" "$az"
done <"$results"

# column SERVER MODE USER FIELD: FIELD (5 req/s, 8 authz_µs) of those runs,
# one per round, in round order.
column() {
	awk -v s="$1" -v m="$2" -v u="$3" -v f="$4" '$1 == s && $2 == m && $3 == u && $f != "-" { print $4, $f }' "$results" |
		sort -n | cut -d' ' -f2
}

echo
echo "creates/s over $ROUNDS rounds (median, min-max); authorization alone (kube's metric, mean µs per request)"
printf '%-9s %-12s %-7s %-18s %s\n' server mode user 'creates/s' 'authz µs'
for s in "${servers[@]}"; do
	for mode in Node,RBAC AlwaysAllow; do
		for user in admin loader; do
			printf '%-9s %-12s %-7s %-18s %s\n' "$s" "$mode" "$user" \
				"$(column "$s" "$mode" "$user" 5 | median_range %.0f)" "$(column "$s" "$mode" "$user" 8 | median_range %.1f)"
		done
	done
done

# ratio A-SPEC B-SPEC: per-round ratios of creates/s, A over B (each spec
# "SERVER MODE USER"), summarised.
ratio() {
	# shellcheck disable=SC2086 # the specs are split on purpose
	paste -d' ' <(column $1 5) <(column $2 5) | awk '$2 > 0 { print $1 / $2 }' | median_range %.2f
}

echo
echo "ratios of creates/s, per round (median, min-max)"
for s in "${servers[@]}"; do
	for user in admin loader; do
		printf '%-40s %s\n' "$s Node,RBAC/AlwaysAllow, $user" "$(ratio "$s Node,RBAC $user" "$s AlwaysAllow $user")"
	done
done
if [[ -n $KUBE_APISERVER ]]; then
	for mode in Node,RBAC AlwaysAllow; do
		for user in admin loader; do
			printf '%-40s %s\n' "dnsplane/kube, $mode, $user" "$(ratio "dnsplane $mode $user" "kube $mode $user")"
		done
	done
fi

if [[ -n $FILTER_BENCH ]]; then
	echo
	echo "dnsplane's authorization step alone (internal/authz BenchmarkFilter: Node,RBAC, bootstrap policy)"
	# The authorizers' informers log to the same output, sometimes in the
	# middle of a result line: keep the names and the figures only.
	(cd "$repo" && go test -run '^$' -bench BenchmarkFilter -benchtime 20000x -count 3 ./internal/authz/) | awk '
		{ for (i = 1; i <= NF; i++) { if ($i ~ /^Benchmark/) name = $i; if ($i == "ns/op") print name, $(i - 1), "ns/op" } }'
fi
