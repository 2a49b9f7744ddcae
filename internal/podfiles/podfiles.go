// Package podfiles is the node agent's on-disk layout of a pod's files: the
// one place that says where `dnsplane agent` writes a pod's resolv.conf and
// hosts and where `dnsplane exec` and the agent's exec server read them
// (docs/agent.md, "Files").
package podfiles

import (
	"crypto/sha256"
	"encoding/hex"
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

// NameMax is the longest file name the file systems the state dir lives on
// take, in bytes (Linux's NAME_MAX).
const NameMax = 255

// shortMark separates a shortened name from its hash in a DirName. It
// cannot occur in a pod name (a DNS subdomain), so a shortened name is
// never mistaken for a real one.
const shortMark = "~"

// hashLen is how many hex digits of SHA-256 a shortened name keeps.
const hashLen = 16

// DirName is the base name of the pod's directory:
// <namespace>_<name>_<uid> when that fits in NameMax bytes, as it does for
// every pod whose namespace and name together are at most 217 bytes (a
// 36-byte UID); so directories written before longer names were handled
// keep their names. A longer one (a namespace of 63 and a name of 253 bytes
// make 354 with the UID) becomes <namespace>_<name prefix>~<hash>_<uid>,
// the prefix cut so the whole is NameMax bytes and the hash the first
// hashLen hex digits of SHA-256 of "<namespace>/<name>", so the name is
// deterministic: the agent, `dnsplane exec` and the exec server compute
// the same one.
func DirName(namespace, name string, uid types.UID) string {
	full := namespace + "_" + name + "_" + string(uid)
	if len(full) <= NameMax {
		return full
	}
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	hash := hex.EncodeToString(sum[:])[:hashLen]
	// UIDs are UUIDs (36 bytes); one over ~170 bytes, which no API server
	// generates, would leave no room and give a name over NameMax, which
	// the agent then reports as the pod's sandbox error.
	keep := max(NameMax-len(namespace)-len(uid)-2-len(shortMark)-hashLen, 1)
	return namespace + "_" + name[:min(keep, len(name))] + shortMark + hash + "_" + string(uid)
}

// ParseDirName splits a DirName back into namespace, name and UID. The
// UID identifies the pod; the name is the DirName's, which for a
// shortened one is the prefix, shortMark and the hash.
func ParseDirName(base string) (namespace, name string, uid types.UID, err error) {
	parts := strings.Split(base, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("pod directory %q: want <namespace>_<name>_<uid>", base)
	}
	return parts[0], parts[1], types.UID(parts[2]), nil
}
