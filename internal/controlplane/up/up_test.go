package up

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/agentrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/dnsroles"
	"github.com/dnsplane/dnsplane/internal/controlplane/operatorrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/schedulerrole"
	"github.com/dnsplane/dnsplane/internal/nodeplan"
	"github.com/dnsplane/dnsplane/internal/operator"
)

// config is an `up` on ports the kernel picks, on loopback addresses
// only, with one node unless nodes says more.
func config(t *testing.T, nodes int) Config {
	t.Helper()
	return Config{
		ControlPlane: controlplane.Config{DataDir: filepath.Join(t.TempDir(), "data")},
		DNS: dnsroles.Config{Listen: "127.0.0.1:0", NodeCacheListen: "127.0.0.2:0", ClusterDomain: "cluster.local",
			Upstreams: []string{"192.0.2.53"}},
		Nodes:   nodeplan.Flags{Nodes: nodes, NodeName: "dnsplane", PodCIDR: "10.244.0.0/24"},
		Checker: operator.ExecChecker{Path: "/bin/true"},
		Started: time.Now(),
	}
}

// kinds names each role by its type, in order.
func kinds(roles []controlplane.Role) []string {
	out := make([]string, 0, len(roles))
	for _, r := range roles {
		out = append(out, fmt.Sprintf("%T", r))
	}
	return out
}

// TestAssembleOrder: up's roles start in one order, which the stop
// reverses: the controllers and the scheduler first (they stop last), the
// DNS operator before the DNS servers whose Corefile it publishes, the
// nodes' agents after the DNS servers their pods name, the control socket
// (and up.json) last, so that it goes first on a stop.
func TestAssembleOrder(t *testing.T) {
	t.Parallel()
	const (
		ctl    = "*controllersrole.Role"
		sched  = "*schedulerrole.Role"
		op     = "*operatorrole.Role"
		dns    = "*dnsroles.Roles"
		agent  = "*agentrole.Role"
		socket = "*up.controlSocketRole"
		delay  = "up.stopDelayRole"
	)
	tests := []struct {
		name  string
		nodes int
		delay time.Duration
		want  []string
	}{
		{name: "one node", nodes: 1, want: []string{ctl, sched, op, dns, agent, socket}},
		{name: "three nodes", nodes: 3, want: []string{ctl, sched, op, dns, agent, agent, agent, socket}},
		{name: "stop delay", nodes: 1, delay: time.Second, want: []string{ctl, sched, op, dns, agent, socket, delay}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := config(t, tt.nodes)
			c.StopDelay = tt.delay
			cp, err := Assemble(c)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cp.DataDirLock.Release(false) })
			if got := kinds(cp.Roles); !slices.Equal(got, tt.want) {
				t.Errorf("roles %v; want %v", got, tt.want)
			}
			if cp.DataDirLock == nil {
				t.Error("no data dir lock handed to the control plane")
			}
			if cp.ClusterDomain != "cluster.local" {
				t.Errorf("control plane's cluster domain %q; want up's --cluster-domain", cp.ClusterDomain)
			}
		})
	}
}

// TestAssembleRefuses: a flag that cannot work is a usage error
// (*controlplane.ConfigError) naming it, found before the data dir is
// claimed: nothing is left in it.
func TestAssembleRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{name: "nodes", change: func(c *Config) { c.Nodes.Nodes = 17 }, wantErr: "--nodes 17: want 1 to 16"},
		{name: "node name with nodes", change: func(c *Config) { c.Nodes.Nodes, c.Nodes.NodeNameSet = 2, true },
			wantErr: `--node-name "dnsplane" names the one node of --nodes 1`},
		{name: "controllers", change: func(c *Config) { c.Controllers = controllers.Options{Controllers: []string{"nope"}} },
			wantErr: `--controllers: "nope" is not a known controller`},
		{name: "option code", change: func(c *Config) { c.DNS.OptionCode = 1 }, wantErr: "--option-code 1"},
		{name: "secure port", change: func(c *Config) { c.ControlPlane.SecurePort = 70000 }, wantErr: "--secure-port 70000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := config(t, 1)
			tt.change(&c)
			_, err := Assemble(c)
			if _, ok := errors.AsType[*controlplane.ConfigError](err); !ok || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Assemble = %v; want a *ConfigError with %q", err, tt.wantErr)
			}
			if _, err := os.Stat(c.ControlPlane.DataDir); !os.IsNotExist(err) {
				t.Errorf("data dir: %v; want none", err)
			}
		})
	}
}

// TestAssembleReleasesOnRefusal: an address that cannot be bound is
// refused after the data dir is claimed, and the lock is given back, so
// that the next `up` on the dir starts.
func TestAssembleReleasesOnRefusal(t *testing.T) {
	t.Parallel()
	c := config(t, 1)
	// 192.0.2.1 (TEST-NET-1) is no address of this machine.
	c.DNS.Listen = "192.0.2.1:0"
	if _, err := Assemble(c); err == nil || !strings.Contains(err.Error(), "cluster DNS") {
		t.Fatalf("Assemble = %v; want the cluster DNS's address refused", err)
	}
	lock, err := controlplane.ClaimDataDir(c.ControlPlane.DataDir, nil)
	if err != nil {
		t.Fatalf("claiming the data dir after the refusal: %v", err)
	}
	if err := lock.Release(false); err != nil {
		t.Fatal(err)
	}
}

// The roles' types, named so that a rename fails to compile here rather
// than only in TestAssembleOrder's strings.
var (
	_ controlplane.Role = (*controllersrole.Role)(nil)
	_ controlplane.Role = (*schedulerrole.Role)(nil)
	_ controlplane.Role = (*operatorrole.Role)(nil)
	_ controlplane.Role = (*dnsroles.Roles)(nil)
	_ controlplane.Role = (*agentrole.Role)(nil)
	_ controlplane.Role = (*controlSocketRole)(nil)
	_ controlplane.Role = stopDelayRole{}
)
