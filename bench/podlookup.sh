#!/usr/bin/env bash
# Seed 002 as a pod feels it (docs/autopath.md, "As a pod sees it"): a C
# program (bench/podlookup/gaibench.c) makes N getaddrinfo lookups inside a
# pod through `dnsplane exec`, so with the pod's resolv.conf and the node
# cache, built with glibc (gcc) and with musl (musl-gcc -static), and
# reports lookups/s and p50/p99 latency. Two pods in one namespace on the
# one node, behind the same node cache: ClusterFirst (`cf`) and
# ClusterFirstWithAutopath (`ap`), both ndots:5.
#
# Names, all short, so that every one goes through the search list:
#   service   a Service in the pod's namespace by its short name
#   external  a name outside the cluster (NAME.example.test, 2 dots < 5),
#             answered by bench/dnsupstream, the node's upstream resolver,
#             after the search list: under ClusterFirst 4 candidates first
#             (3 cluster domains and the host search domain corp.test)
# and two states:
#   cold      every lookup a name no cache has seen: Services web-R-K-I
#             and upstream records cR-K-I.example.test, distinct per round
#             R, case K and lookup I, so the node cache, the cluster DNS's
#             cache and searchexpand's answer cache all miss (and the
#             negative answers of the candidates before are new too)
#   cached    one name (web, www.example.test) COUNT times, after one
#             lookup not counted that fills the caches
#
# Queries on the wire per lookup: coredns_dns_requests_total of the node
# cache (the pod's first nameserver), read from its metrics endpoint (`up
# --nodecache-metrics`) before and after each run, divided by the lookups;
# and its coredns_cache_misses_total likewise: the queries it sent on to
# the cluster DNS.
# musl sends every query to both nameservers of resolv.conf at once, so its
# pods also send the same queries to the cluster DNS directly; those are
# not counted here (up's cluster DNS serves no metrics endpoint of its own).
#
# In each round every (libc, name, state) runs ClusterFirst and autopath
# back to back; the ratio autopath/ClusterFirst is of medians over the
# rounds. `uptime`'s load is printed with each pair: on a shared machine
# compare within a run.
#
# Needs root (port 53, mount namespaces for dnsplane exec), gcc, musl-gcc,
# kubectl, curl, ss.
#
#   bash bench/podlookup.sh
#   ROUNDS=1 COLD=20 CACHED=100 bash bench/podlookup.sh        # a quick check
#   DELAY=10ms DNSPLANE=/tmp/dnsplane bash bench/podlookup.sh  # a slower upstream, a prebuilt binary
set -euo pipefail

ROUNDS=${ROUNDS:-3}
COLD=${COLD:-100}
CACHED=${CACHED:-1000}
DELAY=${DELAY:-0s}
DNS_ADDR=${DNS_ADDR:-127.0.59.20}
CACHE_ADDR=${CACHE_ADDR:-127.0.60.20}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM

script=podlookup.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

[[ $(id -u) == 0 ]] || die "needs root: the DNS addresses are on port 53, and dnsplane exec mounts"
for t in ss kubectl curl gcc musl-gcc; do
	command -v "$t" >/dev/null 2>&1 || die "$t is required (musl-gcc: apt-get install musl-tools)"
done

dnsplane=$(dnsplane_binary)
log "building dnsupstream and gaibench..."
(cd "$repo" && go build -o "$work/dnsupstream" ./bench/dnsupstream)
gcc -O2 -o "$work/gai-glibc" "$repo/bench/podlookup/gaibench.c"
musl-gcc -static -O2 -o "$work/gai-musl" "$repo/bench/podlookup/gaibench.c"

# Cases K: 1 cf glibc, 2 ap glibc, 3 cf musl, 4 ap musl.
cases="1:cf:glibc 2:ap:glibc 3:cf:musl 4:ap:musl"

records=www.example.test=192.0.2.10
for r in $(seq "$ROUNDS"); do
	for k in 1 2 3 4; do
		for i in $(seq 0 $((COLD - 1))); do records+=",c$r-$k-$i.example.test=192.0.2.11"; done
	done
done
: >"$work/upstream.out"
: >"$work/upstream.out.err"
"$work/dnsupstream" -listen "127.0.0.1:$(free_port)" -zone example.test,corp.test -a "$records" -delay "$DELAY" \
	>"$work/upstream.out" 2>"$work/upstream.out.err" &
pids+=($!)
upstream=$(wait_line "$work/upstream.out" 's/^listening on //p' "${pids[-1]}" dnsupstream)
printf 'nameserver 127.0.0.1\nsearch corp.test\n' >"$work/host-resolv.conf"

metrics=127.0.0.1:$(free_port)
: >"$work/up.out"
: >"$work/up.out.err"
"$dnsplane" up --data-dir "$work/up" --secure-port 0 --dns-listen "$DNS_ADDR:53" --nodecache-listen "$CACHE_ADDR:53" \
	--nodecache-metrics "$metrics" --upstream "$upstream" --upstream-resolv-conf "$work/host-resolv.conf" --log-level warn \
	>"$work/up.out" 2>"$work/up.out.err" &
pids+=($!)
kc=$(wait_line "$work/up.out" 's/^  kubeconfig:  //p' "${pids[-1]}" "dnsplane up")
log "up is up: $kc"

k() { kubectl --kubeconfig "$kc" "$@"; }
k create namespace bench >/dev/null
{
	printf 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: bench}\nspec: {ports: [{port: 80}]}\n'
	for r in $(seq "$ROUNDS"); do
		for kk in 1 2 3 4; do
			for i in $(seq 0 $((COLD - 1))); do
				printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: web-%d-%d-%d, namespace: bench}\nspec: {ports: [{port: 80}]}\n' "$r" "$kk" "$i"
			done
		done
	done
} >"$work/services.yaml"
log "creating $((ROUNDS * 4 * COLD + 1)) Services..."
k apply -f "$work/services.yaml" >/dev/null
for p in cf:ClusterFirst ap:ClusterFirstWithAutopath; do
	k apply -n bench -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ${p%%:*}}
spec:
  nodeName: dnsplane
  dnsPolicy: ${p#*:}
  containers: [{name: app, image: example}]
YAML
done
k wait -n bench --for=condition=Ready --timeout=120s pod cf ap >/dev/null
for p in cf ap; do
	log "$p resolv.conf: $("$dnsplane" exec --data-dir "$work/up" -n bench "$p" -- cat /etc/resolv.conf | tr '\n' ' ')"
done
# The kubernetes plugin answers from its informers: wait until they hold
# the last Service created.
last=web-$ROUNDS-4-$((COLD - 1))
for _ in $(seq 600); do
	"$dnsplane" exec --data-dir "$work/up" -n bench cf -- "$work/gai-glibc" 1 "$last" >/dev/null 2>&1 && break
	sleep 0.2
done

# counter NAME: the node cache's counter NAME (summed over its labels).
counter() {
	curl -s "http://$metrics/metrics" |
		awk -v m="$1{" -v s="dns://$CACHE_ADDR:53" 'index($0, m) == 1 && index($0, "server=\"" s "\"") { n += $NF } END { printf "%d\n", n }'
}

# run POD LIBC COUNT NAME: one gaibench run; prints its output line with
# the node cache's requests and cache misses during it appended.
run() {
	local nc0 miss0 out
	nc0=$(counter coredns_dns_requests_total)
	miss0=$(counter coredns_cache_misses_total)
	out=$("$dnsplane" exec --data-dir "$work/up" -n bench "$1" -- "$work/gai-$2" "$3" "$4" || true)
	[[ $out == lookups=* ]] || die "gaibench in $1 ($2, $4): $out"
	echo "$out nodecache=$(($(counter coredns_dns_requests_total) - nc0)) misses=$(($(counter coredns_cache_misses_total) - miss0))"
}

field() { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" <<<"$2"; }

raw=$work/raw.tsv
: >"$raw"
echo "## Raw runs (upstream delay $DELAY)"
echo
echo "| round | libc | name | state | policy | lookups/s | p50 µs | p99 µs | failed | node cache q/lookup | its cache misses/lookup | load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for r in $(seq "$ROUNDS"); do
	for libc in glibc musl; do
		for kind in service external; do
			for state in cold cached; do
				l=$(awk '{ print $1 }' /proc/loadavg)
				for c in $cases; do
					IFS=: read -r kk pol lc <<<"$c"
					[[ $lc == "$libc" ]] || continue
					case $kind:$state in
					service:cold) name="web-$r-$kk-{i}" n=$COLD ;;
					external:cold) name="c$r-$kk-{i}.example.test" n=$COLD ;;
					service:cached) name=web n=$CACHED ;;
					external:cached) name=www.example.test n=$CACHED ;;
					esac
					if [[ $state == cached ]]; then run "$pol" "$libc" 1 "$name" >/dev/null; fi
					out=$(run "$pol" "$libc" "$n" "$name")
					per=$(field lookups "$out")
					nc=$(awk -v a="$(field nodecache "$out")" -v n="$per" 'BEGIN { printf "%.2f", a / n }')
					miss=$(awk -v a="$(field misses "$out")" -v n="$per" 'BEGIN { printf "%.2f", a / n }')
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$libc" "$kind" "$state" "$pol" \
						"$(field per_sec "$out")" "$(field p50_us "$out")" "$(field p99_us "$out")" "$nc" "$miss" >>"$raw"
					echo "| $r | $libc | $kind | $state | $pol | $(field per_sec "$out") | $(field p50_us "$out") | $(field p99_us "$out") | $(field failed "$out") | $nc | $miss | $l |"
					log "round $r $libc $kind $state $pol: $out (load $l)"
				done
			done
		done
	done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -F'\t' -v a="$1" -v b="$2" -v c="$3" -v d="$4" -v f="$5" '$1 == a && $2 == b && $3 == c && $4 == d { print $f }' "$raw" | median; }

echo
echo "## Median of $ROUNDS rounds; ratio = autopath / ClusterFirst (lookups/s: above 1 is faster; p50, p99: below 1 is faster)"
echo
echo "| libc | name | state | node cache q/lookup cf → ap | its cache misses/lookup cf → ap | lookups/s cf → ap | ratio | p50 µs cf → ap | ratio | p99 µs cf → ap | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for libc in glibc musl; do
	for kind in service external; do
		for state in cold cached; do
			row="| $libc | $kind | $state | $(col "$libc" "$kind" "$state" cf 8) → $(col "$libc" "$kind" "$state" ap 8) | $(col "$libc" "$kind" "$state" cf 9) → $(col "$libc" "$kind" "$state" ap 9)"
			for f in 5 6 7; do
				c=$(col "$libc" "$kind" "$state" cf $f) a=$(col "$libc" "$kind" "$state" ap $f)
				row+=" | $c → $a | $(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.2f", a / c }')"
			done
			echo "$row |"
		done
	done
done
