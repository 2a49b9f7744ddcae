// Package up assembles `dnsplane up`: it plans the nodes
// (internal/nodeplan), claims what must be claimed before anything starts
// (the data dir, the DNS addresses) and orders the roles beside the API
// server: the controllers, the scheduler, the DNS operator, the cluster DNS
// and the node caches, one agent per node, and the control socket, which
// starts last and so stops first. cmd/dnsplane turns flags into a Config
// and errors into exit statuses; what runs, and in which order, is decided
// here (docs/architecture.md, "Assembly and the dependency rule").
package up

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/agentrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/dnsroles"
	"github.com/dnsplane/dnsplane/internal/controlplane/nodepower"
	"github.com/dnsplane/dnsplane/internal/controlplane/operatorrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/schedulerrole"
	"github.com/dnsplane/dnsplane/internal/nodeplan"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/upctl"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

// Config is `dnsplane up`: the API server's flags, which it shares with
// `dnsplane apiserver`, and its own. Field comments name the flags.
type Config struct {
	// ControlPlane is the API server's configuration; Assemble adds the
	// roles and the data dir's lock.
	ControlPlane controlplane.Config
	// Controllers are --controllers and --node-monitor-grace-period; each
	// controller runs as its service account, as kubeadm runs
	// kube-controller-manager (docs/controllers.md#identities).
	Controllers controllers.Options
	// DNS are the DNS flags; Assemble fills in NodeNames and Gate from the
	// plan. DNS.ClusterDomain is the whole cluster's (the API server's
	// and the agents').
	DNS dnsroles.Config
	// Nodes are --nodes, --node-name and --pod-cidr (docs/nodes.md).
	Nodes nodeplan.Flags
	// ResolvConf is --upstream-resolv-conf, also the agents' --resolv-conf.
	ResolvConf string
	// Checker dry-loads the Corefiles the DNS operator publishes (a child
	// process of this binary: a Corefile that crashes CoreDNS must not
	// crash up).
	Checker operator.Checker
	// OperatorHealthInterval is how often the DNS operator reads the
	// forward health; 0 is its default (tests shorten it).
	OperatorHealthInterval time.Duration
	// StopDelay, when not zero, makes the ordered stop take that long
	// (--test-stop-delay: tests of the forced exit only).
	StopDelay time.Duration
	// Version and Started are published in up.json.
	Version string
	Started time.Time
}

// Assemble returns the control plane configuration that runs `up`, its
// roles in their start order. Before it returns it has claimed the data
// dir (the control plane takes the lock over, in DataDirLock) and settled
// where the DNS servers listen, so that a second `up` on the same dir
// names the first one's pid rather than a port both would use (issue 29),
// and a refused address leaves nothing behind. Errors the user can fix
// with a flag are *controlplane.ConfigError; on any error the lock is
// released.
func Assemble(c Config) (controlplane.Config, error) {
	cp := c.ControlPlane
	nodes, err := nodeplan.Plan(cp.DataDir, c.Nodes)
	if err != nil {
		return controlplane.Config{}, &controlplane.ConfigError{Err: err}
	}
	// Each node is a switch its node cache and agent run behind, which
	// `dnsplane node stop|start` flips through the control socket.
	switches := make(map[string]*nodepower.Switch, len(nodes))
	socketNodes := make([]upctl.Node, 0, len(nodes))
	for _, n := range nodes {
		sw := nodepower.New(n.Name)
		switches[n.Name] = sw
		socketNodes = append(socketNodes, sw)
	}
	dns := c.DNS
	if len(nodes) > 1 {
		for _, n := range nodes {
			dns.NodeNames = append(dns.NodeNames, n.Name)
		}
	}
	dns.Gate = func(node string, comp controlplane.Component) controlplane.Component {
		if node == "" {
			node = nodes[0].Name
		}
		return switches[node].Gate(comp)
	}
	dnsRoles := dnsroles.New(dns)
	ctl := c.Controllers
	ctl.UseServiceAccountCredentials = true
	cp.ClusterDomain = dns.ClusterDomain
	// The controllers and the scheduler come first: they stop last, after
	// everything that writes through them.
	cp.Roles = append(cp.Roles, controllersrole.New(ctl), schedulerrole.New())
	// Bad flags are refused before anything is probed or logged
	// (docs/apiserver.md), the DNS flags included. The operator and the
	// agents, built below from the settled DNS addresses, validate with
	// the control plane.
	early := cp
	early.Roles = append(slices.Clone(cp.Roles), dnsRoles)
	if err := early.Validate(); err != nil {
		return controlplane.Config{}, asConfigError(err)
	}
	// The data dir is claimed before any address is probed or bound, so
	// that a second `up` on it names the first one's pid instead of
	// blaming a port both would use (issue 29). The control plane takes
	// the lock over; until then, every refusal here gives it back.
	lock, err := controlplane.ClaimDataDir(cp.DataDir, cp.Logger)
	if err != nil {
		return controlplane.Config{}, err
	}
	refuse := func(err error) (controlplane.Config, error) {
		_ = lock.Release(false)
		return controlplane.Config{}, err
	}
	cp.DataDirLock = lock
	if err := dnsRoles.ChooseAddresses(cp.Logger); err != nil {
		return refuse(err)
	}
	// The DNS operator renders the cluster DNS's Corefile with `up`'s DNS
	// flags and publishes it before the cluster DNS starts serving it: its
	// role comes before the DNS roles (docs/dns-operator.md, "In dnsplane
	// up").
	ro, err := dnsRoles.RenderOptions()
	if err != nil {
		return refuse(&controlplane.ConfigError{Err: err})
	}
	serviceRange := cp.ServiceClusterIPRange
	if serviceRange == "" {
		serviceRange = controlplane.DefaultServiceClusterIPRange
	}
	op := operatorrole.New(operatorrole.Config{ServiceRange: serviceRange, Render: ro, Checker: c.Checker, Instances: dnsRoles.ClusterDNS(),
		HealthInterval: c.OperatorHealthInterval})
	cp.Roles = append(cp.Roles, op, dnsRoles)
	// The agents come after the DNS servers: pods' resolv.conf names
	// their node's cache and then the cluster DNS where they ended up
	// serving (docs/agent.md).
	for i, n := range nodes {
		ac := agentrole.Config{
			NodeName: n.Name, ClusterDomain: dns.ClusterDomain, ResolvConf: c.ResolvConf, PodCIDR: n.PodCIDR, StateDir: n.StateDir,
			Gate:               switches[n.Name].Gate,
			LeaseRenewInterval: agentrole.RenewIntervalFor(ctl.NodeMonitorGracePeriod),
			DNS: func() []string {
				var addrs []string
				if nc := dnsRoles.NodeCacheListenOf(i); nc != "" {
					addrs = append(addrs, nc)
				}
				return append(addrs, dnsRoles.Listen())
			},
		}
		if len(nodes) > 1 {
			ac.Named, ac.CertDir = true, filepath.Join(n.StateDir, "pki")
		}
		cp.Roles = append(cp.Roles, agentrole.New(ac))
	}
	// up.json is read once the DNS roles have started, when every
	// address is settled (moved defaults included).
	state := func(cl controlplane.Cluster) upstate.State {
		s := upstate.State{SchemaVersion: upstate.SchemaVersion, PID: os.Getpid(), StartTime: c.Started.UTC().Truncate(time.Second),
			Version: c.Version, DataDir: cl.DataDir, APIServer: cl.URL, Kubeconfig: cl.Kubeconfig,
			ClusterDomain: dns.ClusterDomain, ClusterDNS: dnsRoles.Listen()}
		for i, n := range nodes {
			s.Nodes = append(s.Nodes, upstate.Node{Name: n.Name, NodeCache: dnsRoles.NodeCacheListenOf(i), StateDir: n.StateDir, PodCIDR: n.PodCIDR})
		}
		return s
	}
	cp.Roles = append(cp.Roles, &controlSocketRole{nodes: socketNodes, state: state})
	if c.StopDelay > 0 {
		cp.Roles = append(cp.Roles, stopDelayRole{d: c.StopDelay})
	}
	return cp, nil
}

// asConfigError is err as a usage error: Validate's errors are flags'.
func asConfigError(err error) error {
	if _, ok := errors.AsType[*controlplane.ConfigError](err); ok {
		return err
	}
	return &controlplane.ConfigError{Err: err}
}
