# Shared by the DNS benchmark scripts (dns.sh, autopath.sh); sourced, not
# run. The sourcing script sets $script (its name, for messages) and
# $work, and defines cleanup before it sources this file.

# stop PID: ends a process the script started and waits for it.
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
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
