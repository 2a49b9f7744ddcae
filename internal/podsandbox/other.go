//go:build !linux

package podsandbox

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime"

	"k8s.io/apimachinery/pkg/types"
)

var errUnsupported = errors.New("pod sandboxes need Linux namespaces: not supported on " + runtime.GOOS)

// Main fails: the sandbox is made of Linux namespaces.
func Main([]string) (int, error) { return 126, errUnsupported }

// Config configures a Manager.
type Config struct {
	StateDir  string
	Hide      []string
	Allocator *Allocator
	MountDir  string
	Command   []string
	Logger    *slog.Logger
}

// Pod is what a sandbox is made for.
type Pod struct {
	Namespace, Name string
	UID             types.UID
	Hostname        string
	Dir             string
	HostUTS         bool
}

// Manager fails to start any sandbox off Linux.
type Manager struct{}

// NewManager fails off Linux.
func NewManager(Config) (*Manager, error) { return nil, errUnsupported }

// Ensure fails off Linux.
func (*Manager) Ensure(context.Context, Pod) error { return errUnsupported }

// Running is false off Linux.
func (*Manager) Running(types.UID) bool { return false }

// Stop does nothing off Linux.
func (*Manager) Stop(types.UID) {}

// Close does nothing off Linux.
func (*Manager) Close() {}

// Dial fails off Linux.
func Dial(context.Context, string, types.UID) (*net.UnixConn, error) { return nil, errUnsupported }

// Ensurer starts the sandbox of a pod of the node unless it runs.
type Ensurer interface {
	EnsureSandbox(ctx context.Context, uid types.UID) error
}

// ServeEnsure fails off Linux.
func ServeEnsure(context.Context, string, Ensurer, *slog.Logger) error { return errUnsupported }

// DialSession fails off Linux.
func DialSession(context.Context, string, types.UID) (*net.UnixConn, error) {
	return nil, errUnsupported
}
