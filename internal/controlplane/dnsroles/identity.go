package dnsroles

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/operator/clusterdnspolicy"
	"github.com/dnsplane/dnsplane/internal/pki"
)

// KubeconfigPath is where `up` keeps the cluster DNS's credentials in
// dataDir: a client certificate of clusterdnspolicy.User, next to the
// other roles' (docs/apiserver.md, "Who may do what today").
func KubeconfigPath(dataDir string) string {
	return filepath.Join(dataDir, "pki", "cluster-dns.kubeconfig")
}

// identity is the cluster DNS's kubeconfig, written once per start and
// read by two roles: the DNS operator names it in the Corefile's
// kubernetes plugin, and the cluster DNS reads its ConfigMap with it.
type identity struct {
	once sync.Once
	path string
	err  error
}

// kubeconfig writes the cluster DNS's credentials on the first call of
// a start (pki.WriteRoleKubeconfig: a fresh certificate for this start's
// URL) and returns their path. A Cluster without a CA (the roles'
// unit tests, which start nothing) gets the admin kubeconfig.
func (r *Roles) kubeconfig(cl controlplane.Cluster) (string, error) {
	r.id.once.Do(func() {
		if cl.PKI == nil || cl.DataDir == "" {
			r.id.path = cl.Kubeconfig
			return
		}
		path := KubeconfigPath(cl.DataDir)
		if err := pki.WriteRoleKubeconfig(path, cl.URL, cl.PKI, clusterdnspolicy.User, nil); err != nil {
			r.id.err = fmt.Errorf("cluster DNS: credentials: %w", err)
			return
		}
		r.id.path = path
	})
	return r.id.path, r.id.err
}

// Kubeconfig implements operatorrole.Instances: the kubeconfig the
// cluster DNS reads the API with, which the operator names in the
// Corefile instead of the admin's.
func (i *ClusterDNSInstances) Kubeconfig(cl controlplane.Cluster) (string, error) {
	return i.r.kubeconfig(cl)
}
