package upstate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample(dir string) State {
	return State{SchemaVersion: SchemaVersion, PID: 4242, StartTime: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), Version: "(devel)",
		DataDir: dir, APIServer: "https://127.0.0.1:6443", Kubeconfig: filepath.Join(dir, "kubeconfig"), ClusterDomain: "cluster.local",
		ClusterDNS: "127.0.10.10:53", Nodes: []Node{
			{Name: "node-1", NodeCache: "127.0.20.10:53", StateDir: filepath.Join(dir, "nodes/node-1"), PodCIDR: "10.244.1.0/24"},
			{Name: "node-2", NodeCache: "127.0.20.11:53", StateDir: filepath.Join(dir, "nodes/node-2"), PodCIDR: "10.244.2.0/24"},
		}}
}

func TestWriteRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := sample(dir)
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	// Written again: the rename replaces the file.
	want.PID = 4343
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left in the data dir: %v", entries)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir); err != nil {
		t.Errorf("Remove without a file: %v", err)
	}
	if _, err := Read(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read after Remove: %v, want ErrNotExist", err)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	valid := func(edit func(m map[string]any)) string {
		b, _ := json.Marshal(sample("/d"))
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		edit(m)
		b, _ = json.Marshal(m)
		return string(b)
	}
	node := func(m map[string]any) map[string]any { return m["nodes"].([]any)[0].(map[string]any) }
	tests := []struct {
		name, data, wantErr string
	}{
		{name: "valid", data: valid(func(map[string]any) {})},
		{name: "unknown fields of a later dnsplane are ignored", data: valid(func(m map[string]any) { m["future"] = 1 })},
		{name: "no node cache", data: valid(func(m map[string]any) { node(m)["nodeCache"] = "" })},
		{name: "empty", data: "", wantErr: "not an up.json"},
		{name: "not JSON", data: "pid=1", wantErr: "not an up.json"},
		{name: "two objects", data: valid(func(map[string]any) {}) + "{}", wantErr: "data after the object"},
		{name: "newer schema", data: valid(func(m map[string]any) { m["schemaVersion"] = 2 }), wantErr: "schemaVersion 2 is newer"},
		{name: "no schema", data: valid(func(m map[string]any) { delete(m, "schemaVersion") }), wantErr: "schemaVersion 0"},
		{name: "no pid", data: valid(func(m map[string]any) { m["pid"] = 0 }), wantErr: "pid 0"},
		{name: "negative pid", data: valid(func(m map[string]any) { m["pid"] = -1 }), wantErr: "pid -1"},
		{name: "pid not a number", data: valid(func(m map[string]any) { m["pid"] = "1" }), wantErr: "not an up.json"},
		{name: "http URL", data: valid(func(m map[string]any) { m["apiServer"] = "http://127.0.0.1:6443" }), wantErr: "want an https:// URL"},
		{name: "no kubeconfig", data: valid(func(m map[string]any) { m["kubeconfig"] = "" }), wantErr: "kubeconfig: empty"},
		{name: "cluster DNS without port", data: valid(func(m map[string]any) { m["clusterDNS"] = "127.0.10.10" }), wantErr: "clusterDNS"},
		{name: "node cache a name", data: valid(func(m map[string]any) { node(m)["nodeCache"] = "localhost:53" }), wantErr: "nodeCache"},
		{name: "node without name", data: valid(func(m map[string]any) { node(m)["name"] = "" }), wantErr: "nodes[0]"},
		{name: "node twice", data: valid(func(m map[string]any) { m["nodes"].([]any)[1].(map[string]any)["name"] = "node-1" }), wantErr: "repeated"},
		{name: "too large", data: strings.Repeat(" ", maxSize+1), wantErr: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.data))
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Parse: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// TestPublisher: the file exists from Start until the component stops.
func TestPublisher(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := &Publisher{DataDir: dir, State: func() State { return sample(dir) }}
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	if _, err := Read(dir); err != nil {
		t.Fatalf("after Start: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Path(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after stop: %v, want no up.json", err)
	}
}

// FuzzParse: whatever a user leaves in up.json, Parse returns an error or
// a State whose addresses the status checks can dial.
func FuzzParse(f *testing.F) {
	b, _ := json.Marshal(sample("/d"))
	f.Add(b)
	f.Add([]byte(`{"schemaVersion":1,"pid":1,"apiServer":"https://h:1","kubeconfig":"k","clusterDNS":"[::1]:53","nodes":[{"name":"a"}]}`))
	f.Add([]byte(`{"nodes":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if s.PID <= 0 || s.SchemaVersion != SchemaVersion {
			t.Fatalf("accepted %+v", s)
		}
		// A valid state survives its own round trip.
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
	})
}
