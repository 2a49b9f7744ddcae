package kube

import (
	"context"
	"testing"
)

func TestKubernetes(t *testing.T) {
	requireTools(t)
	c := startCluster(t, 2)
	ctx := context.Background()
	in := c.install(ctx, t)
	t.Logf("installed: webhook %v", in.webhookArgs)
}
