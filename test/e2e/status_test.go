package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/statuscheck"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

// TestStatus is `dnsplane status` and <data-dir>/up.json as a script
// would use them, over one `up --nodes 2`: up.json says where everything
// serves, status is healthy (exit 0), names a stopped node (exit 1) until
// it starts again, and once up stops, up.json is gone and status says no
// up runs (exit 2), as it does over a stale up.json a crash leaves.
func TestStatus(t *testing.T) {
	requireRoot(t)
	dnsAddr := loopback53(t, 51)
	first := consecutive53(t, 52, 2)
	second := netip.AddrPortFrom(netip.MustParseAddrPort(first).Addr().Next(), 53).String()
	dataDir := filepath.Join(t.TempDir(), "data")
	before := time.Now().Add(-time.Second)
	u := startUp(t, dataDir, nil, "--nodes", "2", "--dns-listen", dnsAddr, "--nodecache-listen", first)

	// status runs dnsplane status and checks that it takes a few seconds
	// at most, whatever it finds.
	status := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		start := time.Now()
		out, errOut, code := runDnsplane(t, append([]string{"status", "--data-dir", dataDir}, args...)...)
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("dnsplane status took %s", took)
		}
		return out, errOut, code
	}
	// healthy waits for status to say every component is healthy: a
	// node's Ready takes its agent's first status update.
	healthy := func(t *testing.T, when string) string {
		t.Helper()
		var out, errOut string
		var code int
		err := wait.PollUntilContextTimeout(ctxFor(t, time.Minute), 500*time.Millisecond, 45*time.Second, true, func(context.Context) (bool, error) {
			out, errOut, code = status(t)
			return code == 0, nil
		})
		if err != nil {
			t.Fatalf("%s: dnsplane status: exit %d\n%s%s", when, code, out, errOut)
		}
		return out
	}

	var st upstate.State
	t.Run("up.json", func(t *testing.T) {
		fi, err := os.Stat(upstate.Path(dataDir))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("up.json mode %v, want 0600", fi.Mode().Perm())
		}
		st, err = upstate.Read(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		want := upstate.State{SchemaVersion: 1, PID: u.cmd.Process.Pid, StartTime: st.StartTime, Version: st.Version, DataDir: dataDir,
			APIServer: u.URL, Kubeconfig: u.Kubeconfig, ClusterDomain: "cluster.local", ClusterDNS: dnsAddr,
			Nodes: []upstate.Node{
				{Name: "node-1", NodeCache: first, StateDir: filepath.Join(dataDir, "nodes", "node-1"), PodCIDR: "10.244.1.0/24"},
				{Name: "node-2", NodeCache: second, StateDir: filepath.Join(dataDir, "nodes", "node-2"), PodCIDR: "10.244.2.0/24"},
			}}
		got, _ := json.Marshal(st)
		wantJSON, _ := json.Marshal(want)
		if string(got) != string(wantJSON) {
			t.Errorf("up.json\n%s\nwant\n%s", got, wantJSON)
		}
		if st.Version == "" || st.StartTime.Before(before.Truncate(time.Second)) || st.StartTime.After(time.Now()) {
			t.Errorf("version %q, start time %v (test started %v)", st.Version, st.StartTime, before)
		}
	})

	t.Run("healthy", func(t *testing.T) {
		out := healthy(t, "after up")
		var names []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 2 || f[1] != statuscheck.Healthy {
				t.Errorf("line %q", line)
				continue
			}
			names = append(names, f[0])
		}
		want := []string{"apiserver", "etcd", "controllers", "scheduler", "dns-operator", "cluster-dns",
			"nodecache/node-1", "agent/node-1", "nodecache/node-2", "agent/node-2"}
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("components %q, want %q\n%s", names, want, out)
		}
		if !strings.HasPrefix(out, "NAME ") || !strings.Contains(out, dnsAddr+" answers cluster.local. SOA") || !strings.Contains(out, second+" answers") {
			t.Errorf("status:\n%s", out)
		}
	})

	t.Run("a stopped node", func(t *testing.T) {
		if out, errOut, code := runDnsplane(t, "node", "stop", "node-2", "--data-dir", dataDir); code != 0 {
			t.Fatalf("node stop: exit %d: %s%s", code, out, errOut)
		}
		out, errOut, code := status(t)
		if code != 1 {
			t.Fatalf("status with node-2 stopped: exit %d, want 1\n%s%s", code, out, errOut)
		}
		lines := map[string]string{} // name → status and message, spaces squeezed
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 {
				lines[f[0]] = strings.Join(f[1:], " ")
			}
		}
		for _, name := range []string{"nodecache/node-2", "agent/node-2"} {
			if want := "Stopped stopped with dnsplane node stop; start it with: dnsplane node start node-2 --data-dir " + dataDir; lines[name] != want {
				t.Errorf("%s: %q, want %q\n%s", name, lines[name], want, out)
			}
		}
		for _, name := range []string{"nodecache/node-1", "agent/node-1", "cluster-dns"} {
			if !strings.HasPrefix(lines[name], statuscheck.Healthy+" ") {
				t.Errorf("%s: %q, want Healthy\n%s", name, lines[name], out)
			}
		}
		want := fmt.Sprintf("error: 2 of 10 components of dnsplane up (pid %d) are not healthy: nodecache/node-2 (Stopped), agent/node-2 (Stopped)\n", st.PID)
		if errOut != want {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
		if out, errOut, code := runDnsplane(t, "node", "start", "node-2", "--data-dir", dataDir); code != 0 {
			t.Fatalf("node start: exit %d: %s%s", code, out, errOut)
		}
		healthy(t, "after node start")
	})

	t.Run("json", func(t *testing.T) {
		out, errOut, code := status(t, "-o", "json")
		var r statuscheck.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
			t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
		}
		if !r.Healthy || len(r.Components) != 10 || r.Up.PID != st.PID || r.Up.ClusterDNS != dnsAddr {
			t.Errorf("report %+v", r)
		}
	})

	t.Run("stopped up", func(t *testing.T) {
		saved, err := os.ReadFile(upstate.Path(dataDir))
		if err != nil {
			t.Fatal(err)
		}
		if err := u.stop(); err != nil {
			t.Fatalf("%v\n%s", err, u.stderr.tail())
		}
		if _, err := os.Stat(upstate.Path(dataDir)); !os.IsNotExist(err) {
			t.Errorf("up.json after a clean stop: %v, want none", err)
		}
		out, errOut, code := status(t)
		want := fmt.Sprintf("error: no dnsplane up is running with data dir %s (no up.json); start one with dnsplane up --data-dir %s\n", dataDir, dataDir)
		if code != 2 || out != "" || errOut != want {
			t.Errorf("status after stop: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
		}
		// What a crash leaves: up.json of a pid that is gone.
		if err := os.WriteFile(upstate.Path(dataDir), saved, 0o600); err != nil {
			t.Fatal(err)
		}
		_, errOut, code = status(t)
		if want := fmt.Sprintf("is not running (stale up.json from pid %d: ", st.PID); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("status over a stale up.json: exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
		}
	})
}
