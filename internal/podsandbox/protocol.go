package podsandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The session protocol on a sandbox's socket (SOCK_SEQPACKET, so each
// message is one packet): the agent sends one Request as JSON with the
// session's descriptors attached (SCM_RIGHTS): stdin, stdout and stderr,
// or the pseudo-terminal's slave alone for a TTY session. The sandbox
// answers with one Response once the command has exited. Closing the
// connection before that kills the session's process group.

// Limits of a Request: the socket is root's only, but the sandbox runs
// what it says as the pod, so it is parsed as untrusted input.
const (
	MaxRequestSize = 256 << 10
	maxArgs        = 4096
	maxEnv         = 1024
	maxGroups      = 64
)

// Request is what a session runs and as whom, in the pod's user namespace:
// UID, GID and Groups are container IDs (0..65535).
type Request struct {
	Argv   []string `json:"argv"`
	Env    []string `json:"env,omitempty"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	// Dir is the working directory, absolute; "" = "/". One the pod's
	// user may not enter is replaced by "/" with a warning on stderr.
	Dir string `json:"dir,omitempty"`
	// TTY: one descriptor, a terminal the command gets as its
	// controlling terminal in a session of its own.
	TTY bool `json:"tty,omitempty"`
}

// Files is how many descriptors come with r.
func (r Request) Files() int {
	if r.TTY {
		return 1
	}
	return 3
}

// Response is the session's end.
type Response struct {
	// ExitCode is the command's exit status; 128+signal when a signal
	// ended it, as shells report it.
	ExitCode int `json:"exitCode"`
	// Signal is the signal that ended it, 0 if it exited.
	Signal int `json:"signal,omitempty"`
	// Error says why the command could not be started.
	Error string `json:"error,omitempty"`
}

// DecodeRequest parses and checks a request that came with nfds
// descriptors.
func DecodeRequest(data []byte, nfds int) (Request, error) {
	var r Request
	if len(data) > MaxRequestSize {
		return r, fmt.Errorf("request of %d bytes: over %d", len(data), MaxRequestSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Request{}, fmt.Errorf("decoding the request: %w", err)
	}
	if dec.More() {
		return Request{}, errors.New("decoding the request: data after the request")
	}
	if err := r.Validate(); err != nil {
		return Request{}, err
	}
	if nfds != r.Files() {
		return Request{}, fmt.Errorf("request with %d descriptors: want %d (tty %t)", nfds, r.Files(), r.TTY)
	}
	return r, nil
}

// Validate checks what the sandbox relies on: a command, strings the
// kernel can pass (no NUL), an environment of NAME=VALUE, and IDs inside
// the pod's user namespace.
func (r Request) Validate() error {
	if len(r.Argv) == 0 || r.Argv[0] == "" {
		return errors.New("request: no command")
	}
	if len(r.Argv) > maxArgs || len(r.Env) > maxEnv || len(r.Groups) > maxGroups {
		return fmt.Errorf("request: over %d arguments, %d variables or %d groups", maxArgs, maxEnv, maxGroups)
	}
	for _, a := range r.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errors.New("request: an argument contains NUL")
		}
	}
	if r.Dir != "" && (r.Dir[0] != '/' || strings.IndexByte(r.Dir, 0) >= 0) {
		return fmt.Errorf("request: working directory %q is not an absolute path", r.Dir)
	}
	for _, e := range r.Env {
		if strings.IndexByte(e, 0) >= 0 {
			return errors.New("request: a variable contains NUL")
		}
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("request: variable %q is not NAME=VALUE", e)
		}
	}
	// Kubelet refuses the same for hostUsers: false: only IDs the pod's
	// range maps exist inside it.
	ids := append([]uint32{r.UID, r.GID}, r.Groups...)
	for _, id := range ids {
		if id >= RangeSize {
			return fmt.Errorf("request: ID %d is outside the pod's user namespace (0-%d)", id, RangeSize-1)
		}
	}
	return nil
}

// Run sends r with files on conn (Start) and waits for the response
// (Wait).
func Run(ctx context.Context, conn *net.UnixConn, r Request, files []*os.File) (Response, error) {
	if err := Start(conn, r, files); err != nil {
		return Response{}, err
	}
	return Wait(ctx, conn)
}

// Start sends r with files on conn. The sandbox has its own copies of the
// files once it returns: the caller's may be closed.
func Start(conn *net.UnixConn, r Request, files []*os.File) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if len(files) != r.Files() {
		return fmt.Errorf("session with %d descriptors: want %d", len(files), r.Files())
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(data) > MaxRequestSize {
		return fmt.Errorf("command and environment of %d bytes: over %d", len(data), MaxRequestSize)
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	if _, _, err := conn.WriteMsgUnix(data, unix.UnixRights(fds...), nil); err != nil {
		return fmt.Errorf("sending the session to the pod's sandbox: %w", err)
	}
	return nil
}

// Wait waits for the session's response. When ctx ends first the
// connection is closed, which kills the session.
func Wait(ctx context.Context, conn *net.UnixConn) (Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if ctx.Err() != nil {
		return Response{}, ctx.Err()
	}
	if err != nil {
		return Response{}, fmt.Errorf("the pod's sandbox ended the session: %w", err)
	}
	if n == 0 {
		return Response{}, errors.New("the pod's sandbox ended the session without a status")
	}
	var resp Response
	if err := json.Unmarshal(buf[:n], &resp); err != nil {
		return Response{}, fmt.Errorf("the pod's sandbox answered: %w", err)
	}
	return resp, nil
}

// readRequest receives one request and its descriptors; the descriptors
// are closed when the request is refused.
func readRequest(conn *net.UnixConn) (Request, []*os.File, error) {
	buf := make([]byte, MaxRequestSize+1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return Request{}, nil, err
	}
	var files []*os.File
	msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "session"))
		}
	}
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	switch {
	case perr != nil:
		closeAll()
		return Request{}, nil, fmt.Errorf("reading the descriptors: %w", perr)
	case flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0:
		closeAll()
		return Request{}, nil, errors.New("request or descriptors truncated")
	}
	r, err := DecodeRequest(buf[:n], len(files))
	if err != nil {
		closeAll()
		return Request{}, nil, err
	}
	return r, files, nil
}
