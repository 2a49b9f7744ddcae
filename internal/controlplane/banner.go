package controlplane

import (
	"fmt"
	"strings"
)

// Bannerer is a Role with a banner of its own, which replaces the API
// server's: `up`'s DNS roles say where the DNS servers listen.
type Bannerer interface {
	Banner(Cluster) string
}

// Banner is what the command prints once everything is up: where the API
// server and the kubeconfig are, or the first role's banner.
func (cp *ControlPlane) Banner() string {
	for _, r := range cp.roles {
		if b, ok := r.(Bannerer); ok {
			return b.Banner(cp.cluster())
		}
	}
	return fmt.Sprintf("dnsplane API server at %s\nkubeconfig: %s\n\nTry:\n  export KUBECONFIG=%s\n  kubectl get namespaces\n",
		cp.URL, cp.Kubeconfig, ShellQuote(cp.Kubeconfig))
}

// ShellQuote is path as a POSIX shell word: as is when it needs no
// quoting, else in single quotes, so that a banner's export line can be
// pasted whatever the path.
func ShellQuote(path string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@%=", r)
	}
	if path != "" && !strings.ContainsFunc(path, func(r rune) bool { return !safe(r) }) {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
