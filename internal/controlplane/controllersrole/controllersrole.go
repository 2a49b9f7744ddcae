// Package controllersrole runs kube-controller-manager's controllers
// (internal/controllers) as a role of the control plane, in the process of
// the API server: `dnsplane apiserver` runs the deletion controllers by
// default, as the API server's own loopback client; `dnsplane up` runs all
// of them, each as its service account, as kubeadm runs
// kube-controller-manager (docs/controllers.md).
package controllersrole

import (
	"fmt"
	"path/filepath"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/pki"
)

// DeletionControllers are the controllers `dnsplane apiserver` runs by
// default: the two that finish what a delete starts (a Terminating
// namespace, an owner's dependents), so that its deletion semantics hold
// without a controller manager (docs/apiserver.md, "Deletion").
func DeletionControllers() []string {
	return []string{"namespace-controller", "garbage-collector-controller"}
}

// Role is the controllers of one control plane.
type Role struct{ o controllers.Options }

// New returns the role running o's controllers: nil o.Controllers is
// DeletionControllers, an empty non-nil list none. Without
// o.ClusterSigningCertFile and o.ClusterSigningKeyFile, the CSR signer
// signs with the cluster CA.
func New(o controllers.Options) *Role { return &Role{o: o} }

// Validate implements controlplane.Role: --controllers names known
// controllers that run in dnsplane.
func (r *Role) Validate() error {
	if _, err := controllers.Select(controllers.Descriptors(), r.o.Controllers); err != nil {
		return &controlplane.ConfigError{Err: err}
	}
	return nil
}

// Components implements controlplane.Role: the controller manager, or
// nothing when no controller is selected.
func (r *Role) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	o := r.options(cl.PKI)
	if len(o.Controllers) == 0 {
		return nil, nil
	}
	// The API server's own deletion controllers (`apiserver`) are its
	// loopback; kube-controller-manager's set (`up`) is
	// system:kube-controller-manager, each controller its service account
	// (docs/controllers.md#identities).
	m := &controllers.Manager{Config: cl.Loopback, Logger: cl.Logger.With("component", "controllers"), Options: o}
	if o.UseServiceAccountCredentials {
		path := filepath.Join(cl.DataDir, "pki", "controller-manager.kubeconfig")
		if err := pki.WriteRoleKubeconfig(path, cl.URL, cl.PKI, pki.ControllerManagerUser, nil); err != nil {
			return nil, fmt.Errorf("controllers' credentials: %w", err)
		}
		m.Config, m.Kubeconfig = nil, path
	}
	return []controlplane.Component{m}, nil
}

// options are r's with their defaults: the deletion controllers, and the
// cluster CA for the CSR signer.
func (r *Role) options(b *pki.Bundle) controllers.Options {
	o := r.o
	if o.Controllers == nil {
		o.Controllers = DeletionControllers()
	}
	if o.ClusterSigningCertFile == "" && o.ClusterSigningKeyFile == "" && b != nil {
		o.ClusterSigningCertFile, o.ClusterSigningKeyFile = b.CAFile, b.CAKeyFile
	}
	return o
}
