package kube

import "testing"

func TestKubernetes(t *testing.T) {
	requireTools(t)
	c := startCluster(t, 2)
	t.Logf("cluster at %s, nodes %d", c.server, len(c.nodes))
}
