package controlplane

import (
	"os"
	"slices"
	"strings"
)

// ownEntries are the names dnsplane writes at the top of a data dir (etcd,
// PKI, the admin kubeconfig and token, the agents' state dirs, the cluster
// DNS's files, the control socket, the lock and `up`'s status file). A
// data dir holding none of them and something else is someone else's.
var ownEntries = []string{"etcd", "pki", "kubeconfig", "tokens.csv", "agent", "nodes", "cluster-dns", "up.sock", "up.lock", "up.json"}

// checkOwnDir refuses, without writing anything, a data dir that cannot
// be read or that holds files but none dnsplane writes: a --data-dir
// pointing at a home directory or a project by mistake would otherwise get
// etcd/, pki/ and a kubeconfig written into it. An empty dir is a new one.
func checkOwnDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ConfigErrorf("--data-dir %s cannot be read (%w): fix its permissions or choose another --data-dir", dir, err)
	}
	var foreign []string
	for _, e := range entries {
		if slices.Contains(ownEntries, e.Name()) {
			return nil
		}
		foreign = append(foreign, e.Name())
	}
	if len(foreign) == 0 {
		return nil
	}
	if len(foreign) > 3 {
		foreign = append(foreign[:3], "…")
	}
	return ConfigErrorf("--data-dir %s holds files dnsplane did not write (%s) and none of its own: choose a new or empty --data-dir",
		dir, strings.Join(foreign, ", "))
}
