package main

import (
	"os"
	"path/filepath"
	"testing"
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
