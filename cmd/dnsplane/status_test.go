package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/datadirlock"
)

// TestStatusWithoutUp: `dnsplane status` over a data dir no `up` serves
// says so, naming the data dir and how to start one, with the usage exit
// status (1 is for an `up` that runs with components unhealthy).
func TestStatusWithoutUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stale := t.TempDir()
	// pid 2^22+1 is above Linux's pid_max limit: no process has it.
	if err := os.WriteFile(filepath.Join(stale, "up.json"), []byte(`{"schemaVersion":1,"pid":4194305,"apiServer":"https://127.0.0.1:1",
"kubeconfig":"k","clusterDNS":"127.0.0.1:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no up.json", []string{"status", "--data-dir", dir},
			"error: no dnsplane up is running with data dir " + dir + " (no up.json); start one with dnsplane up --data-dir " + dir + "\n"},
		{"json", []string{"status", "--data-dir", dir, "-o", "json"},
			"error: no dnsplane up is running with data dir " + dir + " (no up.json); start one with dnsplane up --data-dir " + dir + "\n"},
		{"stale", []string{"status", "--data-dir", stale},
			"error: dnsplane up with data dir " + stale + " is not running (stale up.json from pid 4194305: no such process: it crashed or was killed); start one with dnsplane up --data-dir " + stale + "\n"},
		{"output", []string{"status", "--data-dir", dir, "-o", "yaml"}, "error: -o \"yaml\": want json, or no -o for a table\n"},
	}
	for _, tt := range tests {
		out, errOut, code := runCmd(t, "", tt.args...)
		if code != exitUsage || out != "" || errOut != tt.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.name, code, out, errOut, exitUsage, tt.want)
		}
	}
}

// TestStatusAndNodeSocketMissing: with up.sock (or up.json) removed from
// under a running `up`, which still holds the data dir's lock, `status` and
// `node` say that it runs and what is missing, with pid, instead of "no
// dnsplane up is running" (issue 29). The lock is held by this process, as
// `up` would hold it.
func TestStatusAndNodeSocketMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lock, err := datadirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Release(true) })
	pid := strconv.Itoa(os.Getpid())
	sock := filepath.Join(dir, "up.sock")
	missing := "dnsplane up (pid " + pid + ") is running but its control socket " + sock + " is missing; " +
		"stop it and start it again (dnsplane up --data-dir " + dir + ") to get the socket back"

	for _, args := range [][]string{{"node", "list"}, {"node", "stop", "node-2"}} {
		out, errOut, code := runCmd(t, "", append(args, "--data-dir", dir)...)
		if code != exitInvalid || out != "" || errOut != "error: "+missing+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out, errOut, exitInvalid, missing)
		}
	}

	out, errOut, code := runCmd(t, "", "status", "--data-dir", dir)
	wantNoState := "error: dnsplane up (pid " + pid + ") is running but has no " + filepath.Join(dir, "up.json") +
		": it is still starting, or the file was removed (stop it and start it again to get it back)\n"
	if code != exitInvalid || out != "" || errOut != wantNoState {
		t.Errorf("status without up.json: exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, exitInvalid, wantNoState)
	}

	// Nothing answers at these addresses: every check fails fast.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "up.json"), []byte(`{"schemaVersion":1,"pid":`+pid+`,"apiServer":"https://127.0.0.1:1",
"kubeconfig":"`+kubeconfig+`","clusterDNS":"127.0.0.1:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCmd(t, "", "status", "--data-dir", dir, "--timeout", "500ms")
	if code != exitInvalid || !strings.Contains(out, missing) || strings.Contains(errOut, "no dnsplane up is running") ||
		strings.Contains(errOut, "is not running") {
		t.Errorf("status without up.sock: exit %d, stdout %q, stderr %q; want exit %d and %q in the report", code, out, errOut, exitInvalid, missing)
	}
}
