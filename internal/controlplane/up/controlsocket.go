package up

import (
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/upctl"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

// controlSocketRole serves <data-dir>/up.sock, through which `dnsplane
// node stop|start` and `dnsplane status` reach this `up` (internal/upctl),
// and then publishes <data-dir>/up.json (internal/upstate). It starts
// last, once every node runs, and so stops first: up.json goes as soon as
// a clean stop begins.
type controlSocketRole struct {
	nodes []upctl.Node
	state func(controlplane.Cluster) upstate.State
}

func (r *controlSocketRole) Validate() error { return nil }

func (r *controlSocketRole) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	components := func() []upctl.ComponentStatus {
		var out []upctl.ComponentStatus
		for _, c := range cl.Components() {
			st := upctl.ComponentStatus{Name: c.Name, Running: c.Running}
			if c.Err != nil {
				st.Error = c.Err.Error()
			}
			out = append(out, st)
		}
		return out
	}
	log := cl.Logger.With("component", "control-socket")
	return []controlplane.Component{
		&upctl.Server{DataDir: cl.DataDir, Nodes: r.nodes, Components: components, Logger: log},
		&upstate.Publisher{DataDir: cl.DataDir, State: func() upstate.State { return r.state(cl) }, Logger: log},
	}, nil
}
