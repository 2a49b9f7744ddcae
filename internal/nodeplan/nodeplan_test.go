package nodeplan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	t.Parallel()
	one := Flags{Nodes: 1, NodeName: "dnsplane", PodCIDR: "10.244.0.0/24"}
	tests := []struct {
		name      string
		flags     Flags
		wantNames []string
		wantCIDRs []string
		wantDirs  []string // relative to the data dir
		wantErr   string
	}{
		{name: "one node keeps up's layout", flags: one,
			wantNames: []string{"dnsplane"}, wantCIDRs: []string{"10.244.0.0/24"}, wantDirs: []string{"agent"}},
		{name: "one node with its flags", flags: Flags{Nodes: 1, NodeName: "n", NodeNameSet: true, PodCIDR: "10.9.0.0/24", PodCIDRSet: true},
			wantNames: []string{"n"}, wantCIDRs: []string{"10.9.0.0/24"}, wantDirs: []string{"agent"}},
		{name: "three nodes", flags: Flags{Nodes: 3, NodeName: "dnsplane", PodCIDR: "10.244.0.0/24"},
			wantNames: []string{"node-1", "node-2", "node-3"}, wantCIDRs: []string{"10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"},
			wantDirs: []string{"nodes/node-1", "nodes/node-2", "nodes/node-3"}},
		{name: "a given range is split", flags: Flags{Nodes: 2, PodCIDR: "10.50.0.0/16", PodCIDRSet: true},
			wantNames: []string{"node-1", "node-2"}, wantCIDRs: []string{"10.50.1.0/24", "10.50.2.0/24"},
			wantDirs: []string{"nodes/node-1", "nodes/node-2"}},
		{name: "an unmasked range is masked", flags: Flags{Nodes: 2, PodCIDR: "10.50.16.7/20", PodCIDRSet: true},
			wantNames: []string{"node-1", "node-2"}, wantCIDRs: []string{"10.50.17.0/24", "10.50.18.0/24"},
			wantDirs: []string{"nodes/node-1", "nodes/node-2"}},
		{name: "the most nodes", flags: Flags{Nodes: MaxNodes, PodCIDR: "10.244.0.0/24"},
			wantNames: nil},
		{name: "zero", flags: Flags{Nodes: 0}, wantErr: "--nodes 0: want 1 to 16"},
		{name: "too many", flags: Flags{Nodes: 17}, wantErr: "--nodes 17: want 1 to 16"},
		{name: "node name with several", flags: Flags{Nodes: 3, NodeName: "x", NodeNameSet: true},
			wantErr: `--node-name "x" names the one node of --nodes 1; with --nodes 3 the nodes are node-1 to node-3: leave --node-name out`},
		{name: "a /24 cannot be split", flags: Flags{Nodes: 2, PodCIDR: "10.244.0.0/24", PodCIDRSet: true},
			wantErr: `--pod-cidr "10.244.0.0/24": with --nodes 2 it is the cluster's pod range, split into a /24 per node: too small: want room for 2 /24s after the first`},
		{name: "a /23 holds one more", flags: Flags{Nodes: 2, PodCIDR: "10.244.0.0/23", PodCIDRSet: true},
			wantErr: "too small"},
		{name: "a /22 holds three", flags: Flags{Nodes: 3, PodCIDR: "10.244.4.0/22", PodCIDRSet: true},
			wantNames: []string{"node-1", "node-2", "node-3"}, wantCIDRs: []string{"10.244.5.0/24", "10.244.6.0/24", "10.244.7.0/24"},
			wantDirs: []string{"nodes/node-1", "nodes/node-2", "nodes/node-3"}},
		{name: "not a CIDR", flags: Flags{Nodes: 2, PodCIDR: "10.244.0.0", PodCIDRSet: true}, wantErr: "want a CIDR such as 10.244.0.0/16"},
		{name: "IPv6", flags: Flags{Nodes: 2, PodCIDR: "fd00::/48", PodCIDRSet: true}, wantErr: "want an IPv4 range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Plan("/d", tt.flags)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Plan: %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.flags.Nodes {
				t.Fatalf("%d nodes, want %d", len(got), tt.flags.Nodes)
			}
			if tt.wantNames == nil {
				return
			}
			var names, cidrs, dirs []string
			for _, n := range got {
				names, cidrs = append(names, n.Name), append(cidrs, n.PodCIDR)
				rel, _ := filepath.Rel("/d", n.StateDir)
				dirs = append(dirs, rel)
			}
			if !slices.Equal(names, tt.wantNames) || !slices.Equal(cidrs, tt.wantCIDRs) || !slices.Equal(dirs, tt.wantDirs) {
				t.Errorf("got %v %v %v; want %v %v %v", names, cidrs, dirs, tt.wantNames, tt.wantCIDRs, tt.wantDirs)
			}
		})
	}
}

// TestPlanDistinct: the most nodes get distinct /24s in the range.
func TestPlanDistinct(t *testing.T) {
	t.Parallel()
	got, err := Plan("/d", Flags{Nodes: MaxNodes, PodCIDR: "10.244.0.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n.PodCIDR] || !strings.HasPrefix(n.PodCIDR, "10.244.") {
			t.Errorf("%s: pod CIDR %s repeated or outside 10.244.0.0/16", n.Name, n.PodCIDR)
		}
		seen[n.PodCIDR] = true
	}
	if got[MaxNodes-1].PodCIDR != "10.244.16.0/24" {
		t.Errorf("last node's CIDR %s, want 10.244.16.0/24", got[MaxNodes-1].PodCIDR)
	}
}

// TestStateDirOf: dnsplane exec reads a node's own state dir where `up`
// ran several nodes, and <data-dir>/agent otherwise.
func TestStateDirOf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(StateDir(dir, "node-2"), 0o700); err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{
		"node-2":   filepath.Join(dir, "nodes", "node-2"),
		"node-3":   filepath.Join(dir, "agent"),
		"dnsplane": filepath.Join(dir, "agent"),
		"":         filepath.Join(dir, "agent"),
		"../x":     filepath.Join(dir, "agent"),
		"..":       filepath.Join(dir, "agent"),
	} {
		if got := StateDirOf(dir, node); got != want {
			t.Errorf("StateDirOf(%q) = %s, want %s", node, got, want)
		}
	}
}
