#!/usr/bin/env bash
# Load-tests a local `dnsplane apiserver`: builds dnsplane and apiload, starts
# the server on 127.0.0.1 with a free port over a fresh temp data dir
# (embedded etcd), runs apiload for create and then get with 1, 4 and 16
# clients, prints a table, and stops the server on exit.
#
#   bench/apiserver.sh                 # 10 s per run
#   DURATION=5s CLIENTS="1 8" bench/apiserver.sh
set -euo pipefail

DURATION=${DURATION:-10s}
CLIENTS=${CLIENTS:-"1 4 16"}
OPS=${OPS:-"create get"}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server_pid=

trap cleanup EXIT
trap 'exit 130' INT TERM

script=apiserver.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

echo "building dnsplane and apiload..." >&2
(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane && go build -o "$work/apiload" ./bench/apiload)

: >"$work/server.out" # the background job opens it asynchronously
"$work/dnsplane" apiserver --data-dir "$(mktemp -d "$work/data.XXXXXX")" --secure-port 0 \
	--bind-address 127.0.0.1 --log-level warn >"$work/server.out" 2>"$work/server.log" &
server_pid=$!

kubeconfig=
for _ in $(seq 600); do
	kubeconfig=$(sed -n 's/^kubeconfig: //p' "$work/server.out")
	[[ -n $kubeconfig ]] && break
	if ! kill -0 "$server_pid" 2>/dev/null; then
		echo "the server exited:" >&2
		cat "$work/server.log" >&2
		exit 1
	fi
	sleep 0.1
done
if [[ -z $kubeconfig ]]; then
	echo "the server did not print its kubeconfig within 60 s" >&2
	exit 1
fi
echo "server: $(head -n1 "$work/server.out")" >&2

results=()
for op in $OPS; do
	for n in $CLIENTS; do
		echo "apiload --op $op --clients $n --duration $DURATION" >&2
		line=$("$work/apiload" --kubeconfig "$kubeconfig" --op "$op" --clients "$n" \
			--duration "$DURATION" --namespace bench)
		sed "s/^/  /" <<<"$line" >&2
		results+=("$line")
	done
done

echo
printf '%-7s %7s %9s %7s %9s %10s %10s %10s %10s\n' op clients requests errors req/s p50 p90 p99 max
for line in "${results[@]}"; do
	# op=create clients=1 requests=… errors=… rps=… p50=… p90=… p99=… max=…
	awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%-7s %7s %9s %7s %9s %10s %10s %10s %10s\n",
			v["op"], v["clients"], v["requests"], v["errors"], v["rps"], v["p50"], v["p90"], v["p99"], v["max"]
	}' <<<"$line"
done
