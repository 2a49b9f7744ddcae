package podsandbox

import (
	"context"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
)

// Dial connects to the sandbox of pod uid. The path goes through an open
// descriptor of the sockets' directory, since a state dir deep in a
// temporary directory makes it longer than sun_path's 108 bytes.
func Dial(ctx context.Context, stateDir string, uid types.UID) (*net.UnixConn, error) {
	c, err := dialPath(ctx, stateDir, socketName(uid), "unixpacket")
	if err != nil {
		return nil, fmt.Errorf("the pod's sandbox: %w", err)
	}
	return c, nil
}

// listen creates the sandbox's socket, 0600, replacing a stale one.
func listen(stateDir string, uid types.UID) (*net.UnixListener, error) {
	return listenPath(stateDir, socketName(uid), "unixpacket")
}

// listenPath creates the socket name in SocketsDir, 0600 in a 0700
// directory: root's only.
func listenPath(stateDir, name, network string) (*net.UnixListener, error) {
	sockets := SocketsDir(stateDir)
	if err := os.MkdirAll(sockets, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(sockets, 0o700); err != nil {
		return nil, err
	}
	dir, err := os.OpenFile(sockets, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	path := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), name)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	l, err := net.ListenUnix(network, &net.UnixAddr{Name: path, Net: network})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false) // removed by its full path
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}
