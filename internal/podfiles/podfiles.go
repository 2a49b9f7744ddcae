// Package podfiles is the node agent's on-disk layout of a pod's files: the
// one place that says where `dnsplane agent` writes a pod's resolv.conf and
// hosts and where `dnsplane exec` and the agent's exec server read them
// (docs/agent.md, "Files").
package podfiles

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// File names inside a pod's directory, as kubelet names the files it
// bind-mounts on a container's /etc/resolv.conf and /etc/hosts.
const (
	ResolvConf = "resolv.conf"
	Hosts      = "hosts"
)

// PodsDir is the directory under the agent's --state-dir holding one
// directory per pod.
func PodsDir(stateDir string) string { return filepath.Join(stateDir, "pods") }

// Dir is the pod's directory: <state-dir>/pods/<namespace>_<name>_<uid>.
// The UID is part of the name so that a pod deleted and created again with
// the same name never sees the old pod's files, as kubelet keys its pod
// directories by UID. Namespaces and names are DNS labels and subdomains,
// which contain no "_" or "/", so the name splits back unambiguously.
func Dir(stateDir, namespace, name string, uid types.UID) string {
	return filepath.Join(PodsDir(stateDir), DirName(namespace, name, uid))
}

// DirName is the base name of the pod's directory.
func DirName(namespace, name string, uid types.UID) string {
	return namespace + "_" + name + "_" + string(uid)
}

// ParseDirName splits a DirName back into namespace, name and UID.
func ParseDirName(base string) (namespace, name string, uid types.UID, err error) {
	parts := strings.Split(base, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("pod directory %q: want <namespace>_<name>_<uid>", base)
	}
	return parts[0], parts[1], types.UID(parts[2]), nil
}
