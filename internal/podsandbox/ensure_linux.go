package podsandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
)

// agentSocket is the agent's socket in SocketsDir on which a session's
// client asks for the pod's sandbox: sandboxes start with a pod's first
// session, not with the pod (docs/exec.md, "When the sandbox starts").
const agentSocket = "agent.sock"

// Ensurer starts the sandbox of a pod of the node unless it runs.
type Ensurer interface {
	EnsureSandbox(ctx context.Context, uid types.UID) error
}

// ServeEnsure serves the agent's socket until ctx ends: each connection
// sends a pod UID and a newline, and gets "ok" or "error: ..." back.
func ServeEnsure(ctx context.Context, stateDir string, e Ensurer, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	l, err := listenPath(stateDir, agentSocket, "unix")
	if err != nil {
		return fmt.Errorf("pod sandboxes' agent socket: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()
	defer os.Remove(SocketsDir(stateDir) + "/" + agentSocket)
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("pod sandboxes' agent socket: %w", err)
		}
		go func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(time.Minute))
			line, err := bufio.NewReader(&limited{r: conn, n: 256}).ReadString('\n')
			if err != nil {
				return
			}
			uid := types.UID(strings.TrimSpace(line))
			if err := e.EnsureSandbox(ctx, uid); err != nil {
				log.Warn("pod sandbox", "uid", uid, "err", err)
				fmt.Fprintf(conn, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
				return
			}
			fmt.Fprintln(conn, "ok")
		}()
	}
}

type limited struct {
	r net.Conn
	n int
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request too long")
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}

// DialSession connects to the sandbox of pod uid, asking the agent of
// stateDir to start it first when it does not run.
func DialSession(ctx context.Context, stateDir string, uid types.UID) (*net.UnixConn, error) {
	if c, err := Dial(ctx, stateDir, uid); err == nil {
		return c, nil
	}
	ac, err := dialPath(ctx, stateDir, agentSocket, "unix")
	if err != nil {
		return nil, fmt.Errorf("asking the node's agent for the pod's sandbox: %w", err)
	}
	defer ac.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = ac.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = ac.Close() })
	defer stop()
	if _, err := fmt.Fprintf(ac, "%s\n", uid); err != nil {
		return nil, fmt.Errorf("asking the node's agent for the pod's sandbox: %w", err)
	}
	answer, err := bufio.NewReader(ac).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("asking the node's agent for the pod's sandbox: %w", err)
	}
	if answer = strings.TrimSpace(answer); answer != "ok" {
		return nil, errors.New(strings.TrimPrefix(answer, "error: "))
	}
	return Dial(ctx, stateDir, uid)
}

// dialPath connects to name in SocketsDir through an open descriptor of
// the directory (see Dial).
func dialPath(ctx context.Context, stateDir, name, network string) (*net.UnixConn, error) {
	dir, err := os.OpenFile(SocketsDir(stateDir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SocketsDir(stateDir)+"/"+name, err)
	}
	return c.(*net.UnixConn), nil
}
