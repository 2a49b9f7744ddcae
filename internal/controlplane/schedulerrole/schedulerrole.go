// Package schedulerrole runs upstream's kube-scheduler (internal/scheduler)
// as a role of the control plane: `dnsplane up`'s scheduler, in its
// process (docs/controllers.md, "Scheduler").
package schedulerrole

import (
	"fmt"
	"path/filepath"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/scheduler"
)

// Role is the scheduler of one control plane.
type Role struct{}

// New returns the role.
func New() *Role { return &Role{} }

// Validate implements controlplane.Role: the scheduler has no flags.
func (*Role) Validate() error { return nil }

// Components implements controlplane.Role. One replica, so no leader
// election: nothing but a stop ends it (docs/controllers.md). Its own
// identity, which upstream's bootstrap policy binds to the
// system:kube-scheduler and system:volume-scheduler roles.
func (*Role) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	kubeconfig := filepath.Join(cl.DataDir, "pki", "scheduler.kubeconfig")
	if err := pki.WriteRoleKubeconfig(kubeconfig, cl.URL, cl.PKI, pki.SchedulerUser, nil); err != nil {
		return nil, fmt.Errorf("scheduler credentials: %w", err)
	}
	return []controlplane.Component{&scheduler.Scheduler{Kubeconfig: kubeconfig, Logger: cl.Logger.With("component", "scheduler")}}, nil
}
