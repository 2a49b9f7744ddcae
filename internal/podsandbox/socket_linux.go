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
	dir, err := os.OpenFile(SocketsDir(stateDir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the pod's sandbox: %w", err)
	}
	defer dir.Close()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unixpacket", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), socketName(uid)))
	if err != nil {
		return nil, fmt.Errorf("the pod's sandbox (%s): %w", SocketPath(stateDir, uid), err)
	}
	return c.(*net.UnixConn), nil
}

// listen creates the sandbox's socket, 0600, replacing a stale one.
func listen(stateDir string, uid types.UID) (*net.UnixListener, error) {
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
	path := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), socketName(uid))
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false) // removed by its full path on Stop
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}
