package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// Headers of kubelet's managed hosts files (pkg/kubelet/kubelet_pods.go,
// managedHostsHeader and managedHostsHeaderWithHostNetwork).
const (
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// managedHosts is the /etc/hosts kubelet gives a pod that is not on the
// host network: localhost lines, one line per pod IP with the pod's
// hostname (and its FQDN first when hostDomain is set), then the
// HostAliases section.
func managedHosts(podIPs []string, hostname, hostDomain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if hostDomain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, hostDomain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// hostNetworkHosts is kubelet's hosts file of a host-network pod: the
// node's own hosts file under its header, then the HostAliases section.
func hostNetworkHosts(nodeHosts []byte, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderHostNetwork)
	b.Write(nodeHosts)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

func hostAliasEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// podHostname is kubelet's GeneratePodHostNameAndDomain: spec.hostnameOverride,
// else spec.hostname, else the pod name, cut to 63 characters; the domain is
// <subdomain>.<namespace>.svc.<cluster-domain> when spec.subdomain is set
// (and no override). The API server has validated the fields.
func podHostname(pod *corev1.PodSpec, name, namespace, clusterDomain string) (hostname, domain string) {
	if pod.HostnameOverride != nil {
		return truncateHostname(*pod.HostnameOverride), ""
	}
	hostname = name
	if pod.Hostname != "" {
		hostname = pod.Hostname
	}
	if pod.Subdomain != "" {
		domain = fmt.Sprintf("%s.%s.svc.%s", pod.Subdomain, namespace, clusterDomain)
	}
	return truncateHostname(hostname), domain
}

func truncateHostname(h string) string {
	const maxLen = 63
	if len(h) <= maxLen {
		return h
	}
	return strings.TrimRight(h[:maxLen], "-.")
}

// writeFileAtomic makes path hold data: unchanged bytes are left alone
// (returns false); otherwise a temp file in the same directory is written,
// synced and renamed over path, and the directory synced, so a reader sees
// the old file or the new one, never a part.
func writeFileAtomic(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, writeError(path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return false, writeError(path, err)
	}
	// Containers read the files; 0644 as kubelet's.
	if err := f.Chmod(0o644); err != nil {
		_ = f.Close()
		return false, writeError(path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return false, writeError(path, err)
	}
	if err := f.Close(); err != nil {
		return false, writeError(path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, writeError(path, err)
	}
	ok = true
	return true, syncDir(dir)
}

// writeError names the file being written and the system's error, not the
// temp file's random name: a retry that fails the same way gives the same
// message, so the pod gets one Event, not one per retry.
func writeError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Errorf("writing %s: %w", path, err)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// podFiles are the files of one pod directory.
type podFiles struct {
	resolvConf []byte
	hosts      []byte
}

// writePodFiles creates the pod's directory and writes both files; it
// reports whether anything changed on disk.
func writePodFiles(stateDir, namespace, name string, uid types.UID, f podFiles) (bool, error) {
	dir := podfiles.Dir(stateDir, namespace, name, uid)
	created := false
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		created = true
		if err := syncDir(podfiles.PodsDir(stateDir)); err != nil {
			return false, err
		}
	} else if err != nil {
		return false, err
	}
	c1, err := writeFileAtomic(filepath.Join(dir, podfiles.ResolvConf), f.resolvConf)
	if err != nil {
		return false, err
	}
	c2, err := writeFileAtomic(filepath.Join(dir, podfiles.Hosts), f.hosts)
	if err != nil {
		return false, err
	}
	return created || c1 || c2, nil
}

// removePodDir removes a pod's directory; a missing one is not an error.
func removePodDir(stateDir, namespace, name string, uid types.UID) error {
	return removeDir(podfiles.Dir(stateDir, namespace, name, uid))
}

// removeDir removes dir and what it holds; a missing one is not an error.
func removeDir(dir string) error { return os.RemoveAll(dir) }

// podDirs lists the pod directories on disk by UID. Names that are not pod
// directories are reported in bad and left alone.
func podDirs(stateDir string) (dirs map[types.UID]string, bad []string, err error) {
	entries, err := os.ReadDir(podfiles.PodsDir(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	dirs = map[types.UID]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, _, uid, err := podfiles.ParseDirName(e.Name()); err != nil {
			bad = append(bad, e.Name())
		} else {
			dirs[uid] = e.Name()
		}
	}
	return dirs, bad, nil
}
