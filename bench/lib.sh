# Shared by the benchmark scripts (dns.sh, autopath.sh, operator.sh, agent.sh,
# rss.sh, forwardplugins.sh, apiserver.sh, watchfan.sh); sourced, not run. The
# sourcing script sets $script (its name, for messages) and $work, keeps the
# processes it starts in pids (and server_pid, cache_pid for the one under test),
# and traps cleanup on EXIT.

# stop PID: ends a process the script started and waits for it.
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# cleanup stops every process the script started and removes $work.
cleanup() {
	local pid
	for pid in "${cache_pid:-}" "${server_pid:-}" ${pids[@]+"${pids[@]}"}; do
		if [[ -n $pid ]]; then stop "$pid"; fi
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
