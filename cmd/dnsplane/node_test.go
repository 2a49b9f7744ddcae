package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUpNodesFlags: --nodes and the flags that make no sense with several
// nodes are usage errors naming the flag, before anything starts.
func TestUpNodesFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero", []string{"--nodes", "0"}, "error: --nodes 0: want 1 to 16\n"},
		{"too many", []string{"--nodes", "17"}, "error: --nodes 17: want 1 to 16\n"},
		{"node name", []string{"--nodes", "3", "--node-name", "web"},
			"error: --node-name \"web\" names the one node of --nodes 1; with --nodes 3 the nodes are node-1 to node-3: leave --node-name out\n"},
		{"a /24 for three", []string{"--nodes", "3", "--pod-cidr", "10.244.0.0/24"},
			"error: --pod-cidr \"10.244.0.0/24\": with --nodes 3 it is the cluster's pod range, split into a /24 per node: too small: want room for 3 /24s after the first, such as 10.244.0.0/16\n"},
		{"metrics", []string{"--nodes", "2", "--nodecache-listen", "127.0.24.10:53", "--nodecache-metrics", "127.0.0.1:9253"},
			"error: --nodecache-metrics \"127.0.0.1:9253\": one address cannot serve the metrics of 2 node caches (--nodes): leave it out\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			args := append([]string{"up", "--data-dir", dir, "--upstream", "192.0.2.53", "--nodecache-listen", ""}, tt.args...)
			out, errOut, code := runCmd(t, "", args...)
			if code != exitUsage || out != "" || errOut != tt.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, exitUsage, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
				t.Errorf("etcd dir: %v; want none", err)
			}
		})
	}
}

// TestNodeCommandWithoutUp: `dnsplane node` over a data dir no `up`
// serves says so, naming the data dir, with a usage exit status.
func TestNodeCommandWithoutUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"node", "stop", "node-2"}, {"node", "start", "node-2"}, {"node", "list"}} {
		out, errOut, code := runCmd(t, "", append(args, "--data-dir", dir)...)
		want := "error: no dnsplane up is running with data dir " + dir + " (no one serves " + filepath.Join(dir, "up.sock") +
			"); start one with dnsplane up --data-dir " + dir + "\n"
		if code != exitUsage || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out, errOut, exitUsage, want)
		}
	}
}
