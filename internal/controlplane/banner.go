package controlplane

import "fmt"

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
	return fmt.Sprintf("dnsplane API server at %s\nkubeconfig: %s\n", cp.URL, cp.Kubeconfig)
}
