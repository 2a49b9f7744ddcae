// Package upstate is <data-dir>/up.json: what a running `dnsplane up`
// serves, for scripts and for `dnsplane status` (docs/operations.md,
// "Status and up.json"). `up` writes it once everything serves and removes
// it when it stops cleanly, so a file whose process is gone was left by a
// crash. Every component of `up` runs in its one process, PID.
package upstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// FileName is the file's name in the data dir.
const FileName = "up.json"

// SchemaVersion is the version of State this dnsplane writes. Fields are
// only ever added within a version; a reader refuses a newer one rather
// than guess.
const SchemaVersion = 1

// maxSize bounds what Parse reads: the file is small (16 nodes at most)
// and a user may have replaced it with anything.
const maxSize = 1 << 20

// State is up.json.
type State struct {
	SchemaVersion int `json:"schemaVersion"`
	// PID is the process of `up`; every component runs in it.
	PID       int       `json:"pid"`
	StartTime time.Time `json:"startTime"`
	Version   string    `json:"version"` // dnsplane's, as `dnsplane version` prints it
	DataDir   string    `json:"dataDir"`
	// APIServer is the https:// URL of the API server.
	APIServer string `json:"apiServer"`
	// Kubeconfig is the admin kubeconfig's path.
	Kubeconfig    string `json:"kubeconfig"`
	ClusterDomain string `json:"clusterDomain"`
	// ClusterDNS is the ADDR:PORT the cluster DNS serves on.
	ClusterDNS string `json:"clusterDNS"`
	Nodes      []Node `json:"nodes"`
}

// Node is one node of `up` (one, or node-1 to node-N with --nodes N).
type Node struct {
	Name string `json:"name"`
	// NodeCache is the ADDR:PORT its node cache serves on, "" without one.
	NodeCache string `json:"nodeCache"`
	// StateDir holds its pods' files (docs/nodes.md).
	StateDir string `json:"stateDir"`
	PodCIDR  string `json:"podCIDR"`
}

// Path is the up.json of dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Write replaces dataDir's up.json with s atomically: a reader sees the
// old file or the new one, never a part (temp file, fsync, rename).
func Write(dataDir string, s State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", FileName, err)
	}
	data = append(data, '\n')
	// CreateTemp creates the file 0600: it names the admin kubeconfig.
	f, err := os.CreateTemp(dataDir, "."+FileName+"-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", FileName, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, Path(dataDir))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", Path(dataDir), err)
	}
	return nil
}

// Remove deletes dataDir's up.json; none there is not an error.
func Remove(dataDir string) error {
	if err := os.Remove(Path(dataDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", Path(dataDir), err)
	}
	return nil
}

// Read reads and checks dataDir's up.json. With none there, the error
// wraps os.ErrNotExist.
func Read(dataDir string) (State, error) {
	f, err := os.Open(Path(dataDir))
	if err != nil {
		return State{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return State{}, fmt.Errorf("reading %s: %w", Path(dataDir), err)
	}
	s, err := Parse(data)
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", Path(dataDir), err)
	}
	return s, nil
}

// Parse decodes and checks an up.json: what the status checks dial and
// signal must be well-formed, since a user can edit the file.
func Parse(data []byte) (State, error) {
	if len(data) > maxSize {
		return State{}, fmt.Errorf("larger than %d bytes", maxSize)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return State{}, fmt.Errorf("not an up.json: %w", err)
	}
	if dec.More() {
		return State{}, errors.New("not an up.json: data after the object")
	}
	if err := s.validate(); err != nil {
		return State{}, err
	}
	return s, nil
}

func (s *State) validate() error {
	switch {
	case s.SchemaVersion > SchemaVersion:
		return fmt.Errorf("schemaVersion %d is newer than this dnsplane's %d: use the dnsplane of the running up", s.SchemaVersion, SchemaVersion)
	case s.SchemaVersion < 1:
		return fmt.Errorf("schemaVersion %d: want %d", s.SchemaVersion, SchemaVersion)
	case s.PID <= 0:
		return fmt.Errorf("pid %d: want a process id", s.PID)
	case s.Kubeconfig == "":
		return errors.New("kubeconfig: empty")
	}
	u, err := url.Parse(s.APIServer)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("apiServer %q: want an https:// URL", s.APIServer)
	}
	if _, err := netip.ParseAddrPort(s.ClusterDNS); err != nil {
		return fmt.Errorf("clusterDNS %q: want ADDR:PORT", s.ClusterDNS)
	}
	seen := map[string]bool{}
	for i, n := range s.Nodes {
		if n.Name == "" || seen[n.Name] {
			return fmt.Errorf("nodes[%d]: name %q empty or repeated", i, n.Name)
		}
		seen[n.Name] = true
		if n.NodeCache != "" {
			if _, err := netip.ParseAddrPort(n.NodeCache); err != nil {
				return fmt.Errorf("nodes[%d] (%s): nodeCache %q: want ADDR:PORT or empty", i, n.Name, n.NodeCache)
			}
		}
	}
	return nil
}

// Publisher is the control plane component that publishes up.json: it
// starts last, once everything else serves, and so stops first, removing
// the file as soon as `up` begins a clean stop.
type Publisher struct {
	DataDir string
	// State is called once, at Start, when every address is settled.
	State  func() State
	Logger *slog.Logger
}

// Name implements controlplane.Component.
func (p *Publisher) Name() string { return FileName }

// Start writes up.json.
func (p *Publisher) Start(context.Context) error { return Write(p.DataDir, p.State()) }

// Run waits for the stop and removes up.json.
func (p *Publisher) Run(ctx context.Context) error {
	<-ctx.Done()
	if err := Remove(p.DataDir); err != nil && p.Logger != nil {
		p.Logger.Warn("up.json left behind", "err", err)
	}
	return nil
}
