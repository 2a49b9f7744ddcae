package dnscli

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/cliexit"
	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/nodecachenet"
)

// nodeNetKeepInterval is how often a running node cache puts back an
// interface, address or table someone removed (node-cache's -syncinterval
// default).
const nodeNetKeepInterval = time.Minute

// nodeNetTeardownTimeout bounds the exit's teardown: a node cache that is
// being stopped must not hang on a wedged netlink socket.
const nodeNetTeardownTimeout = 30 * time.Second

// serveNodeCacheOnNode is the node cache with --setup-interface: its
// addresses on a dummy interface and NOTRACK rules first, then the
// Corefile served on a listener shared (SO_REUSEPORT) with the other
// instance a DaemonSet rolling update runs beside it; the node's last
// instance removes the interface and rules at exit (docs/kubernetes.md,
// "The node cache on your nodes").
func serveNodeCacheOnNode(cmd *cobra.Command, n *nodeCacheFlags, nodeCorefile string, logger *slog.Logger) error {
	nc, err := n.net.Config(n.o.Listen, n.o.Health, n.o.Ready, n.o.Metrics)
	if err != nil {
		return cliexit.Usagef("%s", err)
	}
	nc.Logger = logger
	ctx := cmd.Context()
	node, err := nodecachenet.Setup(ctx, nc)
	if err != nil {
		return cliexit.Invalidf("--setup-interface: %s", err)
	}
	keepCtx, stopKeep := context.WithCancel(ctx)
	go node.Keep(keepCtx, nodeNetKeepInterval)
	defer func() {
		stopKeep()
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nodeNetTeardownTimeout)
		defer cancel()
		removed, err := node.Teardown(tctx)
		switch {
		case err != nil:
			logger.Error("node cache teardown", "err", err)
		case !removed:
			logger.Info("another node cache instance runs on this node; it keeps the interface and rules")
		}
	}()
	srv, err := coredns.StartShared(ctx, nodeCorefile, logger)
	if err != nil {
		return cliexit.Invalidf("%s", startError(err, "--listen picks another address"))
	}
	releaseStartup(logger)(nodeCorefile, nil)
	<-srv.Done()
	return nil
}
