// Package podsandbox gives each pod the namespaces a container runtime's
// pause container holds for it (docs/exec.md): a sandbox process, started
// by the node agent when the pod runs and killed when it goes, in a user
// namespace of its own that maps container IDs 0..65535 onto an
// unprivileged host range of the pod (as kubelet does for hostUsers:
// false, KEP-127), and PID, UTS and mount namespaces of its own: the
// pod's hostname, the pod's resolv.conf and hosts read-only on /etc, the
// data dir and the agent's state dir hidden, and a /proc of the pod's
// processes only.
//
// A multithreaded Go program cannot join a user namespace (setns(2)
// refuses), so exec sessions are the sandbox's children: the agent, or
// `dnsplane exec`, connects to the sandbox's socket (in the state dir,
// root's only) and hands it the command, the identity and the session's
// descriptors (protocol.go); the sandbox runs it as the pod's user with
// no capabilities and no_new_privs (podexec.ExecAs) and answers with its
// exit status.
package podsandbox

import (
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// Subcommand is the hidden dnsplane subcommand the sandbox and its
// sessions run as.
const Subcommand = "__podsandbox"

// SocketsDir is where the sandboxes' sockets are, under the agent's state
// dir: 0700, each socket 0600, so only root connects.
func SocketsDir(stateDir string) string { return filepath.Join(stateDir, "sandboxes") }

func socketName(uid types.UID) string { return string(uid) + ".sock" }

// SocketPath is the session socket of the pod uid's sandbox.
func SocketPath(stateDir string, uid types.UID) string {
	return filepath.Join(SocketsDir(stateDir), socketName(uid))
}
