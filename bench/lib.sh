# Shared by the benchmark scripts (dns.sh, autopath.sh, operator.sh, agent.sh,
# rss.sh, forwardplugins.sh, apiserver.sh, watchfan.sh, authz.sh,
# createpath.sh); sourced, not run. The
# sourcing script sets $script (its name, for messages) and $work, keeps the
# processes it starts in pids (and server_pid, cache_pid for the one under test),
# and traps cleanup on EXIT.

# stop PID: ends a process the script started and waits for it.
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# cleanup stops every process the script started, the last started first,
# and removes $work. Last first, so that a server stops before the etcd it
# was started on: kube-apiserver told to stop after its etcd has gone waits
# for it, and the script with it, for good.
cleanup() {
	local pid i started=(${pids[@]+"${pids[@]}"})
	for pid in "${cache_pid:-}" "${server_pid:-}"; do
		if [[ -n $pid ]]; then stop "$pid"; fi
	done
	for ((i = ${#started[@]} - 1; i >= 0; i--)); do
		stop "${started[i]}"
	done
	rm -rf "$work"
}

log() { echo "$*" >&2; }
die() {
	log "$script: $*"
	exit 1
}

apt_install() {
	local sudo=""
	if [[ $(id -u) != 0 ]]; then sudo=sudo; fi
	log "installing $* (apt-get)..."
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq "$@" >/dev/null
}

# require_tools installs dnsperf and dig if missing, checks the rest, and
# sets $coredns to stock CoreDNS 1.15.0 (a coredns on PATH, or go install).
require_tools() {
	command -v dnsperf >/dev/null 2>&1 || apt_install dnsperf
	command -v dig >/dev/null 2>&1 || apt_install dnsutils
	coredns=$(command -v coredns || true)
	if [[ -z $coredns ]]; then
		local gobin gopath
		gobin=$(go env GOBIN)
		if [[ -z $gobin ]]; then
			gopath=$(go env GOPATH)
			gobin=${gopath%%:*}/bin
		fi
		if [[ ! -x $gobin/coredns ]]; then
			log "installing stock CoreDNS v1.15.0 (go install, a few minutes cold)..."
			go install github.com/coredns/coredns@v1.15.0
		fi
		coredns=$gobin/coredns
	fi
	command -v taskset >/dev/null 2>&1 || die "taskset (util-linux) is required"
	command -v kubectl >/dev/null 2>&1 || die "kubectl is required"
	command -v ss >/dev/null 2>&1 || die "ss (iproute2) is required"
}

# median_range FORMAT: "median (min-max)" of the numbers on stdin, one a
# line, each printed with the printf FORMAT; "-" if there are none (authz.sh,
# createpath.sh).
median_range() {
	sort -g | awk -v f="$1" '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf f " (" f "-" f ")\n", m, v[1], v[NR]
	}'
}

# free_port prints a port that nothing on this machine uses for TCP or UDP
# and that this script has not handed out yet.
handed=" "
free_port() {
	local used p
	used=$(ss -Htuan | awk '{ n = split($5, a, ":"); print a[n] }')
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 30000))
		if ! grep -qx "$p" <<<"$used" && [[ $handed != *" $p "* ]]; then
			handed+="$p "
			echo "$p"
			return
		fi
	done
	die "no free port"
}

# wait_line FILE SED-EXPR PID WHAT: prints the first match of SED-EXPR in FILE
# once it appears (60 s at most), failing if PID exits first. The process's
# stderr is in FILE.err.
wait_line() {
	local out
	for _ in $(seq 600); do
		out=$(sed -n "$2" "$1")
		if [[ -n $out ]]; then
			sed -n 1p <<<"$out"
			return
		fi
		kill -0 "$3" 2>/dev/null || die "$4 exited: $(cat "$1" "$1.err" 2>/dev/null)"
		sleep 0.1
	done
	die "$4 did not start within 60 s"
}

# dnsplane_binary prints the dnsplane binary to measure: $DNSPLANE when set
# (a build to compare, e.g. of an older commit), else ./cmd/dnsplane built
# into $work (the build is not timed).
dnsplane_binary() {
	if [[ -n ${DNSPLANE:-} ]]; then
		echo "$DNSPLANE"
		return
	fi
	log "building dnsplane (not timed)..."
	(cd "$repo" && go build -o "$work/dnsplane" ./cmd/dnsplane)
	echo "$work/dnsplane"
}

# require_apiserver_tools: what the API server scripts (authz.sh,
# createpath.sh) need: etcd (installed if missing), curl, kubectl, and
# openssl and a kube-apiserver that runs when $KUBE_APISERVER is set; builds
# bench/apiload into $work/apiload.
require_apiserver_tools() {
	command -v etcd >/dev/null 2>&1 || apt_install etcd-server
	command -v curl >/dev/null 2>&1 || die "curl is required"
	command -v kubectl >/dev/null 2>&1 || die "kubectl is required"
	if [[ -n ${KUBE_APISERVER:-} ]]; then
		command -v openssl >/dev/null 2>&1 || die "openssl is required"
		"$KUBE_APISERVER" --version >&2 || die "KUBE_APISERVER=$KUBE_APISERVER does not run"
	fi
	log "building apiload..."
	(cd "$repo" && go build -o "$work/apiload" ./bench/apiload)
}

# start_etcd DIR: a single-member etcd in DIR/etcd on free ports of $BIND
# (default 127.0.0.1); sets etcd_url and etcd_pid. No fsync: etcd's own cost
# is not what the scripts measure, and it is the same for every server.
start_etcd() {
	local cport pport host=${BIND:-127.0.0.1}
	cport=$(free_port)
	pport=$(free_port)
	etcd_url=http://$host:$cport
	etcd --name bench --data-dir "$1/etcd" --listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
		--listen-peer-urls "http://$host:$pport" --initial-advertise-peer-urls "http://$host:$pport" \
		--initial-cluster "bench=http://$host:$pport" --unsafe-no-fsync --log-level error \
		>"$1/etcd.log" 2>&1 &
	etcd_pid=$!
	pids+=("$etcd_pid")
	for _ in $(seq 300); do
		curl -sf "$etcd_url/health" >/dev/null 2>&1 && return
		kill -0 "$etcd_pid" 2>/dev/null || die "etcd exited: $(cat "$1/etcd.log")"
		sleep 0.1
	done
	die "etcd did not start"
}

# start_kube DIR TOKENS TOKEN [FLAG...]: $KUBE_APISERVER (kube-apiserver,
# built once from a scratch module with our go.mod: `go build
# k8s.io/kubernetes/cmd/kube-apiserver`) over $etcd_url on a free port of
# $BIND (default 127.0.0.1), with self-signed serving certificates and
# service-account keys in DIR, --token-auth-file TOKENS and the FLAGs
# (authorization mode, admission plugins). Sets server_pid, server_url and
# kubeconfig (DIR/kubeconfig, authenticating with TOKEN), once /readyz
# answers (after the post-start hooks: RBAC's bootstrap policy is in).
start_kube() {
	local dir=$1 tokens=$2 token=$3 port host=${BIND:-127.0.0.1}
	shift 3
	port=$(free_port)
	openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
	openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
	"$KUBE_APISERVER" --etcd-servers "$etcd_url" --secure-port "$port" --bind-address "$host" \
		--cert-dir "$dir/certs" --token-auth-file "$tokens" \
		--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/sa.pub" \
		--service-account-signing-key-file "$dir/sa.key" --service-cluster-ip-range 10.96.0.0/12 \
		"$@" >"$dir/server.out" 2>&1 &
	server_pid=$!
	pids+=("$server_pid")
	server_url=https://$host:$port
	kubeconfig=$dir/kubeconfig
	cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kube, cluster: {server: "$server_url", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: kube, context: {cluster: kube, user: admin}}]
current-context: kube
EOF
	for _ in $(seq 600); do
		curl -skf -H "Authorization: Bearer $token" "$server_url/readyz" >/dev/null 2>&1 && return
		kill -0 "$server_pid" 2>/dev/null || die "kube-apiserver exited: $(tail -20 "$dir/server.out")"
		sleep 0.1
	done
	die "kube-apiserver not ready within 60 s"
}
