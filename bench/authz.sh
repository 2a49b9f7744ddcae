#!/usr/bin/env bash
# What authorization costs on the create path: two `dnsplane apiserver`s over
# fresh data dirs, one with --authorization-mode Node,RBAC (the default) and
# one with AlwaysAllow, loaded in turn by apiload with pod creates, as
#   - the admin (system:masters: allowed before RBAC is asked), and
#   - a token user that a RoleBinding lets create pods (RBAC walks the
#     bindings: the cost of a real user),
# ROUNDS times, alternating the servers so that both see the same machine.
#
#   bench/authz.sh                         # 10 s per run, 4 clients, 2 rounds
#   DURATION=5s CLIENTS=8 ROUNDS=3 bench/authz.sh
set -euo pipefail

DURATION=${DURATION:-10s}
CLIENTS=${CLIENTS:-4}
ROUNDS=${ROUNDS:-2}
BIND=${BIND:-127.0.0.1}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM

script=authz.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

log "building dnsplane and apiload..."
(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/apiload" ./bench/apiload)
echo "loader-token,loader,loader-uid" >"$work/tokens.csv"

# start MODE: runs a server with --authorization-mode MODE and prints its
# admin kubeconfig once it serves.
start() {
	local out="$work/$1.out"
	: >"$out"
	"$work/dnsplane" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
		--bind-address "$BIND" --log-level warn --token-auth-file "$work/tokens.csv" \
		--authorization-mode "$1" >"$out" 2>"$work/$1.log" &
	pids+=($!)
	local kc=
	for _ in $(seq 600); do
		kc=$(sed -n 's/^kubeconfig: //p' "$out")
		[[ -n $kc ]] && break
		sleep 0.1
	done
	[[ -n $kc ]] || die "the $1 server did not start: $(tail -n 5 "$work/$1.log")"
	echo "$kc"
}

# loader KUBECONFIG: a copy of the admin kubeconfig with the loader's token,
# and the RBAC objects that let it create pods in namespace bench.
loader() {
	local admin=$1 kc="$1.loader"
	cp "$admin" "$kc"
	kubectl --kubeconfig "$kc" config set-credentials loader --token loader-token >/dev/null
	kubectl --kubeconfig "$kc" config set-context --current --user loader >/dev/null
	kubectl --kubeconfig "$admin" create namespace bench >/dev/null
	kubectl --kubeconfig "$admin" create clusterrole pod-loader --verb=get,create --resource=pods,namespaces >/dev/null
	kubectl --kubeconfig "$admin" -n bench create rolebinding loader --clusterrole=pod-loader --user=loader >/dev/null
	echo "$kc"
}

rbac_admin=$(start Node,RBAC)
allow_admin=$(start AlwaysAllow)
rbac_loader=$(loader "$rbac_admin")
allow_loader=$(loader "$allow_admin")

results=()
for round in $(seq "$ROUNDS"); do
	for run in "Node,RBAC admin $rbac_admin" "AlwaysAllow admin $allow_admin" \
		"Node,RBAC loader $rbac_loader" "AlwaysAllow loader $allow_loader"; do
		read -r mode user kc <<<"$run"
		log "round $round: $mode as $user"
		line=$("$work/apiload" --kubeconfig "$kc" --op create --clients "$CLIENTS" --duration "$DURATION" --namespace bench 2>/dev/null)
		results+=("$mode $user $line")
	done
done

echo
printf '%-12s %-7s %8s %7s %9s %10s %10s %10s\n' mode user requests errors req/s p50 p90 p99
for line in "${results[@]}"; do
	awk '{
		for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%-12s %-7s %8s %7s %9s %10s %10s %10s\n", $1, $2, v["requests"], v["errors"], v["rps"], v["p50"], v["p90"], v["p99"]
	}' <<<"$line"
done
