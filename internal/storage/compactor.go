package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactionClaimKey coordinates compaction among all API servers sharing one etcd.
// It lives outside any store prefix because compaction is global to the etcd keyspace.
const compactionClaimKey = "/dnsplane/compaction-claim"

// RunCompactor compacts etcd's history every interval until ctx ends (kube-apiserver
// does the same every 5 minutes). Each round compacts to the revision observed one
// round earlier, so a watch or paged list always has at least one interval to resume
// before its revision disappears.
//
// Several API servers may run it against the same etcd: each round, each of them tries
// a compare-and-swap on a claim key, comparing the mod revision it saw last round. Only
// a server that finds the claim untouched since its own last round (nobody else ran in
// between) compacts; the others just remember the new claim. So normally one server
// compacts, and when it goes away another takes over within two intervals.
func RunCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration, logger *slog.Logger) {
	logger = loggerOrDiscard(logger).With("component", "etcd-compactor")
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	c := compactor{client: client, logger: logger, claimKey: compactionClaimKey}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if _, err := c.round(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("etcd compaction round failed; retrying next interval", "err", err)
		}
	}
}

type compactor struct {
	client   *clientv3.Client
	logger   *slog.Logger
	claimKey string
	// claimRev is the claim key's mod revision as seen last round (0: absent).
	claimRev int64
	// target is the revision observed last round: next round's compaction point.
	target int64
}

// round runs one compaction round and returns the revision it compacted to (0: none).
func (c *compactor) round(ctx context.Context) (int64, error) {
	resp, err := c.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(c.claimKey), "=", c.claimRev)).
		Then(clientv3.OpPut(c.claimKey, "")).
		Else(clientv3.OpGet(c.claimKey, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("claiming compaction: %w", err)
	}
	target := c.target
	c.target = resp.Header.Revision
	if !resp.Succeeded {
		c.claimRev = 0
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) == 1 {
			c.claimRev = kvs[0].ModRevision
		}
		return 0, nil
	}
	c.claimRev = resp.Header.Revision // our put is the transaction's only write
	if target == 0 {
		return 0, nil
	}
	if _, err := c.client.Compact(ctx, target); err != nil {
		// Someone (an operator, etcd's own auto-compaction) already compacted further.
		if errors.Is(err, rpctypes.ErrCompacted) {
			return 0, nil
		}
		return 0, fmt.Errorf("compacting to revision %d: %w", target, err)
	}
	c.logger.Info("compacted etcd history", "revision", target)
	return target, nil
}
