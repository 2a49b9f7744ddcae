// Package upctl is how commands reach the running `dnsplane up` of a data
// dir: `up` serves HTTP on the unix socket <data-dir>/up.sock (mode 0600:
// only its user may stop its nodes), and `dnsplane node stop|start` are its
// clients (docs/nodes.md, "The control socket").
//
//	GET  /nodes              → {"nodes":[{"name":"node-1","running":true},…]}
//	POST /nodes/NAME/stop    → {"name":"node-2","running":false,"changed":true}
//	POST /nodes/NAME/start   → {"name":"node-2","running":true,"changed":true}
//	GET  /components         → {"components":[{"name":"apiserver","running":true},…,
//	                             {"name":"scheduler","running":false,"error":"…"}]}
//
// /components lists every component of `up` in its start order (the API
// server, controllers, scheduler, DNS operator, cluster DNS, each node's
// cache and agent, …) and whether its Run is still going; `dnsplane status`
// reads it. A node's components keep running while the node is stopped
// (they wait to be started again); /nodes says which nodes are stopped.
//
// Errors are a status other than 200 with {"error":"…"} in the user's terms.
package upctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dnsplane/dnsplane/internal/datadirlock"
)

// SocketName is the control socket's name in the data dir.
const SocketName = "up.sock"

// SocketPath is the control socket of the `up` of dataDir.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, SocketName) }

// Node is a node `up` runs, as the socket acts on it (nodepower.Switch).
type Node interface {
	Name() string
	On() bool
	// Set turns the node on or off; off returns once it has stopped.
	Set(ctx context.Context, on bool) (changed bool, err error)
}

// NodeStatus is one node in the protocol.
type NodeStatus struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
	Changed bool   `json:"changed,omitempty"`
}

// NodeList is the answer to GET /nodes.
type NodeList struct {
	Nodes []NodeStatus `json:"nodes"`
}

// ComponentStatus is one component in the protocol.
type ComponentStatus struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
	Error   string `json:"error,omitempty"`
}

// ComponentList is the answer to GET /components.
type ComponentList struct {
	Components []ComponentStatus `json:"components"`
}

type errorBody struct {
	Error string `json:"error"`
}

// Server serves the control socket; it is a control plane component
// (Name, Start, Run).
type Server struct {
	DataDir string
	Nodes   []Node
	// Components lists the control plane's components (GET /components).
	Components func() []ComponentStatus
	Logger     *slog.Logger

	ln net.Listener
}

// Name implements controlplane.Component.
func (s *Server) Name() string { return "control-socket" }

// Start binds the socket. A socket file left by an `up` that did not stop
// cleanly is replaced; one another process still serves is refused.
func (s *Server) Start(ctx context.Context) error {
	path := SocketPath(s.DataDir)
	if _, err := os.Lstat(path); err == nil {
		d := net.Dialer{Timeout: time.Second}
		if c, err := d.DialContext(ctx, "unix", path); err == nil {
			_ = c.Close()
			return fmt.Errorf("control socket %s: another dnsplane up serves this data dir", path)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("control socket: removing the stale %s: %w", path, err)
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return fmt.Errorf("control socket: %w", err)
	}
	s.ln = ln
	return nil
}

// Run serves until ctx ends; closing the listener removes the socket file.
func (s *Server) Run(ctx context.Context) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// Handler is the protocol.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nodes", func(w http.ResponseWriter, _ *http.Request) {
		var l NodeList
		for _, n := range s.Nodes {
			l.Nodes = append(l.Nodes, NodeStatus{Name: n.Name(), Running: n.On()})
		}
		writeJSON(w, http.StatusOK, l)
	})
	mux.HandleFunc("GET /components", func(w http.ResponseWriter, _ *http.Request) {
		l := ComponentList{Components: []ComponentStatus{}}
		if s.Components != nil {
			l.Components = append(l.Components, s.Components()...)
		}
		writeJSON(w, http.StatusOK, l)
	})
	mux.HandleFunc("POST /nodes/{name}/{action}", func(w http.ResponseWriter, r *http.Request) {
		var on bool
		switch r.PathValue("action") {
		case "start":
			on = true
		case "stop":
		default:
			writeJSON(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no action %q: want start or stop", r.PathValue("action"))})
			return
		}
		name := r.PathValue("name")
		i := slices.IndexFunc(s.Nodes, func(n Node) bool { return n.Name() == name })
		if i < 0 {
			writeJSON(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no node %s; nodes: %s", name, strings.Join(s.names(), ", "))})
			return
		}
		n := s.Nodes[i]
		changed, err := n.Set(r.Context(), on)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, errorBody{Error: err.Error()})
			return
		}
		if changed && s.Logger != nil {
			s.Logger.Info("node "+r.PathValue("action")+"ped", "node", name)
		}
		writeJSON(w, http.StatusOK, NodeStatus{Name: name, Running: on, Changed: changed})
	})
	return mux
}

func (s *Server) names() []string {
	out := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		out[i] = n.Name()
	}
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Client talks to the `up` of DataDir.
type Client struct{ DataDir string }

// Nodes lists the nodes.
func (c Client) Nodes(ctx context.Context) (NodeList, error) {
	var l NodeList
	err := c.do(ctx, http.MethodGet, "/nodes", &l)
	return l, err
}

// Components lists the components of `up` and whether each runs.
func (c Client) Components(ctx context.Context) (ComponentList, error) {
	var l ComponentList
	err := c.do(ctx, http.MethodGet, "/components", &l)
	return l, err
}

// SetNode stops (on=false) or starts a node.
func (c Client) SetNode(ctx context.Context, name string, on bool) (NodeStatus, error) {
	action := "stop"
	if on {
		action = "start"
	}
	var st NodeStatus
	err := c.do(ctx, http.MethodPost, "/nodes/"+url.PathEscape(name)+"/"+action, &st)
	return st, err
}

// ErrNotRunning is returned (wrapped) when no `up` serves the data dir.
var ErrNotRunning = errors.New("no dnsplane up is running")

// SocketMissingError is an `up` that runs, holding the data dir's lock
// (internal/datadirlock), while its control socket is gone or served by no
// one: someone removed or replaced the file. Only a restart of that `up`
// binds the socket again.
type SocketMissingError struct {
	DataDir, Socket string
	// PID is the holder of the data dir's lock, 0 if its lock file does
	// not say.
	PID int
	// Missing: no file at Socket; else a file no one serves.
	Missing bool
}

func (e *SocketMissingError) Error() string {
	who := "dnsplane up"
	if e.PID > 0 {
		who = fmt.Sprintf("dnsplane up (pid %d)", e.PID)
	}
	state := "is missing"
	if !e.Missing {
		state = "is served by no one"
	}
	return fmt.Sprintf("%s is running but its control socket %s %s; stop it and start it again (dnsplane up --data-dir %s) to get the socket back",
		who, e.Socket, state, e.DataDir)
}

// notServed says why no one answers on the socket: an `up` that holds
// the data dir but lost its socket, another process holding the data dir
// (an `apiserver` serves no socket), or nothing.
func (c Client) notServed(sock string, missing bool) error {
	h, err := datadirlock.Holder(c.DataDir)
	switch {
	case err != nil || h == nil:
	case !strings.HasSuffix(h.Holder, " apiserver"):
		// Named by its command line, which global flags before the
		// subcommand or a wrapper hide: only an apiserver is told apart.
		return &SocketMissingError{DataDir: c.DataDir, Socket: sock, PID: h.PID, Missing: missing}
	default:
		who := h.Holder
		if h.PID > 0 {
			who = fmt.Sprintf("%s (pid %d)", h.Holder, h.PID)
		}
		return fmt.Errorf("%w with data dir %s: %s holds it, and serves no control socket", ErrNotRunning, c.DataDir, who)
	}
	return fmt.Errorf("%w with data dir %s (no one serves %s); start one with dnsplane up --data-dir %s", ErrNotRunning, c.DataDir, sock, c.DataDir)
}

func (c Client) do(ctx context.Context, method, path string, out any) error {
	sock := SocketPath(c.DataDir)
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, method, "http://up"+path, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return c.notServed(sock, errors.Is(err, os.ErrNotExist))
		}
		return fmt.Errorf("reaching dnsplane up through %s: %w", sock, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e errorBody
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" {
			return fmt.Errorf("dnsplane up answered %s", resp.Status)
		}
		return errors.New(e.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading dnsplane up's answer: %w", err)
	}
	return nil
}
