#!/usr/bin/env bash
# Controllers and scheduler under a burst of pods (issue 20; bench/README.md,
# "Controllers and scheduler"), on 127.0.0.1 only. In one run, per side:
#
#   upstream  `dnsplane apiserver` + kube-controller-manager + kube-scheduler
#             (the real 1.37 binaries, separate processes) + `dnsplane agent`
#             + `dnsplane dns`
#   dnsplane  the same with `dnsplane controllers` and `dnsplane scheduler`
#   up        `dnsplane up`: all of it in one process
#   upstream-qps  (not by default) upstream with dnsplane's client QPS and
#             burst (UPSTREAM_QPS, UPSTREAM_BURST: 200, 300) instead of
#             their defaults (20/30 and 50/100): the same code at the same
#             pace, which separates the implementation from the setting
#
# each on a fresh data dir. A warm-up Deployment of 1 replica behind a
# headless Service must resolve first (controllers, scheduler, agent and DNS
# all work); then IDLE seconds of CPU and RSS; then bench/burst twice: N pods
# created with no nodeName, and a Deployment scaled 0 → N, each with a
# headless and a ClusterIP Service selecting them. For each burst: seconds
# until all N are created, bound, Running, ready in both Services'
# EndpointSlices, and resolvable (the headless Service's A records from the
# cluster DNS over TCP hold N addresses); API requests per pod
# (apiserver_request_total before and after); CPU and peak RSS of every
# process over the burst.
#
#   bash bench/controllers.sh                                # N=1000, all three sides, 1 round
#   N=50 IDLE=5 bash bench/controllers.sh                    # a quick check of the script
#   ROUNDS=3 SIDES="upstream dnsplane" bash bench/controllers.sh
#   UPSTREAM_BIN=/path/to/dir DNSPLANE=/path/to/dnsplane bash bench/controllers.sh
#
# UPSTREAM_BIN is a directory with kube-controller-manager and kube-scheduler;
# unset, test/upstream/run.sh builds them (about 11 minutes cold) into its
# cache dir and they are taken from there. DNSPLANE is a prebuilt dnsplane;
# unset, cmd/dnsplane is built. KEEP=DIR keeps each side's logs and the raw
# results there as the run goes. Progress goes to stderr, the tables to stdout;
# every process the script started is stopped on exit.
set -euo pipefail

N=${N:-1000}
IDLE=${IDLE:-30}         # s of idle sampling after the warm-up
WARM=${WARM:-30}         # s from a side's start to its idle sampling (kube-controller-manager starts its controllers over ~20 s)
SETTLE=${SETTLE:-10}     # s of quiet before each burst
ROUNDS=${ROUNDS:-1}      # rounds per side; the tables show medians
SIDES=${SIDES:-"upstream dnsplane up"}
AGENT_QPS=${AGENT_QPS:-50} # the node agent's --kube-api-qps (burst twice that): kubelet's default
TIMEOUT=${TIMEOUT:-10m}  # per burst
UPSTREAM_QPS=${UPSTREAM_QPS:-200}    # side upstream-qps: dnsplane's controllers' and scheduler's client QPS
UPSTREAM_BURST=${UPSTREAM_BURST:-300}

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

trap cleanup EXIT
trap 'exit 130' INT TERM

script=controllers.sh
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

for t in ss kubectl; do
	command -v "$t" >/dev/null 2>&1 || die "$t is required"
done

log "building burst..."
(cd "$repo" && go build -o "$work/burst" ./bench/burst)
dnsplane=$(dnsplane_binary)
has_cmd() { "$dnsplane" "$1" --help >/dev/null 2>&1; }
# help_has CMD FLAG: whether `dnsplane CMD` has --FLAG.
help_has() { "$dnsplane" "$1" --help 2>/dev/null | grep -qE -- "--$2( |=)"; }
drop_side() {
	log "$2: side $1 left out"
	SIDES=$(sed "s/\b$1\b//" <<<"$SIDES")
}
# The dnsplane and up sides need the commands of issue 20. A build with
# `dnsplane controllers` and no `dnsplane scheduler` runs the dnsplane side
# with kube-scheduler, and leaves up (which has no scheduler then) out.
own_scheduler=0
if has_cmd scheduler; then own_scheduler=1; fi
if [[ " $SIDES " == *" dnsplane "* ]] && ! has_cmd controllers; then
	drop_side dnsplane "$dnsplane has no controllers command"
fi
if [[ " $SIDES " == *" up "* ]] && ((!own_scheduler)); then
	drop_side up "$dnsplane has no scheduler command (nor a scheduler in up)"
fi
if [[ " $SIDES " == *" upstream "* || " $SIDES " == *" upstream-qps "* || (" $SIDES " == *" dnsplane "* && $own_scheduler == 0) ]]; then
	if [[ -z ${UPSTREAM_BIN:-} ]]; then
		version=$(cd "$repo" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
		UPSTREAM_BIN=${XDG_CACHE_HOME:-$HOME/.cache}/dnsplane-upstream/$version
		BIN=$UPSTREAM_BIN BUILD_ONLY=1 bash "$repo/test/upstream/run.sh"
	fi
	for b in kube-controller-manager kube-scheduler; do
		[[ -x $UPSTREAM_BIN/$b ]] || die "$UPSTREAM_BIN/$b: not found (UPSTREAM_BIN is the directory holding it)"
	done
fi
[[ -n ${SIDES// /} ]] || die "no side to run"

results=$work/results # SIDE BURST ROUND KEY VALUE
: >"$results"

# start NAME CMD...: starts CMD in the background with its output in
# $dir/NAME.out and .err, and sets $started to its PID.
start() {
	local name=$1
	shift
	: >"$dir/$name.out"
	: >"$dir/$name.out.err"
	"$@" >"$dir/$name.out" 2>"$dir/$name.out.err" &
	started=$!
	pids+=("$started")
}

# record SIDE BURST ROUND FILE: burst's output lines into $results.
record() {
	awk -v s="$1" -v b="$2" -v r="$3" '
		$1 == "stage" { print s, b, r, "stage:" $2, $3 }
		$1 == "proc" { print s, b, r, "cpu:" $2, $4; print s, b, r, "rssmax:" $2, $8; print s, b, r, "rssend:" $2, $10 }
		$1 == "requests" { print s, b, r, "req:" $2 "/" $3 "/" $4, $5 }' "$4" >>"$results"
}

# measure SIDE ROUND KUBECONFIG DNS PROCS: warm-up, idle, the two bursts.
measure() {
	local side=$1 round=$2 kc=$3 dnsaddr=$4 procs=$5 b
	log "$side: warm-up (a Deployment of 1 replica must resolve)..."
	if ! "$work/burst" --kubeconfig "$kc" --namespace warmup --mode deployment --count 1 --dns "$dnsaddr" \
		--timeout 5m >"$dir/warmup.out" 2>"$dir/warmup.err" || grep -q ' -$' "$dir/warmup.out"; then
		log "$side: the warm-up did not resolve, side left out: $(cat "$dir/warmup.out" "$dir/warmup.err")"
		KEEP=${KEEP:-$(mktemp -d)}
		log "$side: its logs are kept in $KEEP"
		return 1
	fi
	local rest=$((side_start + WARM - SECONDS))
	log "$side: warm-up replica resolvable; idle for $IDLE s from $((rest > 0 ? rest : 0)) s on..."
	if ((rest > 0)); then sleep "$rest"; fi
	"$work/burst" --mode idle --duration "${IDLE}s" --procs "$procs" >"$dir/idle.out"
	record "$side" idle "$round" "$dir/idle.out"
	for b in pods deployment; do
		sleep "$SETTLE"
		log "$side: $b burst of $N..."
		"$work/burst" --kubeconfig "$kc" --namespace "bench-$b" --mode "$b" --count "$N" --dns "$dnsaddr" \
			--timeout "$TIMEOUT" --procs "$procs" >"$dir/$b.out" 2>"$dir/$b.err" ||
			die "$side: $b burst failed: $(cat "$dir/$b.err")"
		cat "$dir/$b.err" >&2
		record "$side" "$b" "$round" "$dir/$b.out"
		log "$side: $b: $(awk '$1 == "stage" { printf "%s %s s  ", $2, $3 }' "$dir/$b.out")"
	done
}

# kube_scheduler KUBECONFIG [QPS BURST]: starts kube-scheduler as
# test/upstream does, with its default client QPS (50, burst 100) or these.
kube_scheduler() {
	local qps=""
	if [[ -n ${2:-} ]]; then qps=$(printf '\n  qps: %s\n  burst: %s' "$2" "$3"); fi
	cat >"$dir/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "$1"$qps
leaderElection:
  leaderElect: false
YAML
	start scheduler "$UPSTREAM_BIN/kube-scheduler" --config="$dir/scheduler.yaml" --bind-address=127.0.0.1 \
		--secure-port="$(free_port)" --authentication-skip-lookup \
		--authorization-always-allow-paths=/healthz,/readyz,/livez
}

# separate SIDE ROUND: the API server, controllers, scheduler, agent and DNS
# as separate processes.
separate() {
	local side=$1 round=$2 api ctrl sched agent dnsp kc ctx port ready
	# Every controller in the controllers' process: a dnsplane apiserver
	# that has --controllers runs the deletion ones itself by default.
	local apiflags=()
	if help_has apiserver controllers; then apiflags+=(--controllers=); fi
	start apiserver "$dnsplane" apiserver --data-dir "$dir/api" --secure-port 0 --bind-address 127.0.0.1 --log-level warn \
		${apiflags[@]+"${apiflags[@]}"}
	api=$started
	kc=$(wait_line "$dir/apiserver.out" 's/^kubeconfig: //p' "$api" "dnsplane apiserver")
	if [[ $side == upstream* ]]; then
		# The flags of test/upstream (docs/development.md): no delegated
		# auth (dnsplane serves no TokenReview), no leader election, every
		# path under the run's dir.
		local qps=()
		if [[ $side == upstream-qps ]]; then qps=(--kube-api-qps="$UPSTREAM_QPS" --kube-api-burst="$UPSTREAM_BURST"); fi
		start controllers "$UPSTREAM_BIN/kube-controller-manager" --kubeconfig="$kc" --controllers='*' \
			--leader-elect=false --secure-port=0 --use-service-account-credentials=false \
			--flex-volume-plugin-dir="$dir/flexvolume" ${qps[@]+"${qps[@]}"}
		ctrl=$started
		if [[ $side == upstream-qps ]]; then
			kube_scheduler "$kc" "$UPSTREAM_QPS" "$UPSTREAM_BURST"
		else
			kube_scheduler "$kc"
		fi
	else
		start controllers "$dnsplane" controllers --kubeconfig "$kc" --leader-elect=false --log-level warn
		ctrl=$started
		if ((own_scheduler)); then
			local flags=()
			if help_has scheduler leader-elect; then flags+=(--leader-elect=false); fi
			if help_has scheduler log-level; then flags+=(--log-level warn); fi
			start scheduler "$dnsplane" scheduler --kubeconfig "$kc" ${flags[@]+"${flags[@]}"}
		else
			kube_scheduler "$kc"
		fi
	fi
	sched=$started
	start agent "$dnsplane" agent --kubeconfig "$kc" --node-name bench --pod-cidr 10.244.0.0/20 \
		--kube-api-qps "$AGENT_QPS" --kube-api-burst $((AGENT_QPS * 2)) \
		--cluster-dns 10.96.0.10 --resolv-conf "" --state-dir "$dir/agent" --log-level warn
	agent=$started
	# The cluster DNS: the kubernetes plugin and nothing that delays an
	# answer (no cache), so "resolvable" is when its informers have the
	# EndpointSlices.
	ctx=$(kubectl --kubeconfig "$kc" config current-context)
	port=$(free_port)
	ready=$(free_port)
	cat >"$dir/Corefile" <<EOF
.:$port {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:$ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $kc $ctx
    }
}
EOF
	start dns "$dnsplane" dns --conf "$dir/Corefile" --log-level warn
	dnsp=$started
	measure "$side" "$round" "$kc" "127.0.0.1:$port" \
		"controllers=$ctrl,scheduler=$sched,apiserver=$api,agent=$agent,dns=$dnsp"
}

# together ROUND: `dnsplane up`, one process.
together() {
	local round=$1 up kc port
	port=$(free_port)
	printf 'nameserver 127.0.0.1\nsearch example.test\n' >"$dir/host-resolv.conf"
	start up "$dnsplane" up --data-dir "$dir/up" --secure-port 0 --bind-address 127.0.0.1 \
		--dns-listen "127.0.0.1:$port" --nodecache-listen "127.0.0.1:$(free_port)" --pod-cidr 10.244.0.0/20 \
		--upstream "127.0.0.1:$(free_port)" --upstream-resolv-conf "$dir/host-resolv.conf" --log-level warn
	up=$started
	kc=$(wait_line "$dir/up.out" 's/^  kubeconfig:  //p' "$up" "dnsplane up")
	measure up "$round" "$kc" "127.0.0.1:$port" "up=$up"
}

for round in $(seq "$ROUNDS"); do
	for side in $SIDES; do
		dir=$work/$side-$round
		mkdir -p "$dir"
		log "== $side, round $round/$ROUNDS"
		outer=${#pids[@]}
		side_start=$SECONDS
		case $side in
		upstream | upstream-qps | dnsplane) separate "$side" "$round" || true ;;
		up) together "$round" || true ;;
		*) die "SIDES: unknown side $side (upstream, upstream-qps, dnsplane, up)" ;;
		esac
		# Stop this side's processes, last started first.
		for ((i = ${#pids[@]} - 1; i >= outer; i--)); do
			stop "${pids[i]}"
			unset "pids[i]"
		done
		pids=(${pids[@]+"${pids[@]}"})
		# Kept side by side, so that a run cut short still has its logs
		# and the raw results of the sides done.
		if [[ -n ${KEEP:-} ]]; then
			mkdir -p "$KEEP"
			cp -r "$dir" "$results" "$KEEP/"
		fi
	done
done

# --- tables -------------------------------------------------------------------

# get SIDE BURST KEY: the median over rounds ("-" if no round has it).
get() {
	awk -v s="$1" -v b="$2" -v k="$3" '$1 == s && $2 == b && $4 == k && $5 != "-" { print $5 }' "$results" | sort -g |
		awk '{ a[NR] = $1 } END {
			if (NR == 0) print "-"
			else if (NR % 2) print a[(NR + 1) / 2]
			else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
procs_of() { if [[ $1 == up ]]; then echo up; else echo controllers scheduler apiserver agent dns; fi; }
label() {
	case $1 in
	upstream) echo "kube-controller-manager + kube-scheduler 1.37.2" ;;
	upstream-qps) echo "kube-controller-manager + kube-scheduler 1.37.2, client QPS $UPSTREAM_QPS/$UPSTREAM_BURST" ;;
	dnsplane) if ((own_scheduler)); then echo "dnsplane controllers + scheduler"; else echo "dnsplane controllers + kube-scheduler 1.37.2"; fi ;;
	up) echo "dnsplane up (one process)" ;;
	esac
}

echo
echo "## Burst of $N pods: seconds from the first create (or the scale) until all $N are … (median of $ROUNDS)"
echo
echo "| side | burst | created | bound | Running | ready in EndpointSlices | resolvable |"
echo "|---|---|---|---|---|---|---|"
for side in $SIDES; do
	for b in pods deployment; do
		row="| $(label "$side") | $([[ $b == pods ]] && echo "$N pod creates" || echo "Deployment 0 → $N")"
		for s in created bound running endpoints resolvable; do row+=" | $(get "$side" "$b" "stage:$s")"; done
		echo "$row |"
	done
done

echo
echo "## API requests per pod (apiserver_request_total over the burst ÷ $N, median of $ROUNDS)"
echo
header="| verb resource subresource"
sep="|---"
cols=()
for side in $SIDES; do
	for b in pods deployment; do
		cols+=("$side $b")
		header+=" | $side, $b"
		sep+="|---"
	done
done
echo "$header |"
echo "$sep|"
# Rows: total first, then every key with ≥ 0.01 per pod somewhere, by its
# largest value.
keys=$(awk '$2 != "idle" && $4 ~ /^req:/ && $4 != "req:total/-/-" && $5 >= 0.01 { if ($5 > m[$4]) m[$4] = $5 }
	END { for (k in m) print m[k], k }' "$results" | sort -gr | awk '{ print $2 }')
for key in req:total/-/- $keys; do
	row="| ${key#req:}"
	row=${row//\// }
	row=${row/total - -/**all**}
	for c in "${cols[@]}"; do
		v=$(get ${c% *} ${c#* } "$key")
		row+=" | $([[ $v == - ]] && echo 0 || echo "$v")"
	done
	echo "$row |"
done

echo
echo "## CPU (s) and RSS (MiB): idle ${IDLE} s, and over each burst (median of $ROUNDS)"
echo
echo "| side | process | idle CPU s | idle RSS | $N pods: CPU s | peak RSS | Deployment 0 → $N: CPU s | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for side in $SIDES; do
	for p in $(procs_of "$side"); do
		echo "| $(label "$side") | $p | $(get "$side" idle "cpu:$p") | $(get "$side" idle "rssend:$p") | $(get "$side" pods "cpu:$p") | $(get "$side" pods "rssmax:$p") | $(get "$side" deployment "cpu:$p") | $(get "$side" deployment "rssmax:$p") |"
	done
done

echo
echo "Binaries: $(stat -c '%n %s' "$dnsplane" ${UPSTREAM_BIN:+"$UPSTREAM_BIN/kube-controller-manager" "$UPSTREAM_BIN/kube-scheduler"} |
	awk '{ n = split($1, a, "/"); printf "%s%s %.0f MB", sep, a[n], $2 / 1e6; sep = ", " }')"
if [[ -n ${KEEP:-} ]]; then
	log "logs and raw results kept in $KEEP"
fi
