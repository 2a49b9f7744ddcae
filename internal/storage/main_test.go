package storage

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// sharedClient talks to one embedded etcd started for the whole package: starting etcd
// costs far more than any single test. Tests isolate themselves by key prefix.
var sharedClient *clientv3.Client

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(runWithEmbedded(m))
}

func runWithEmbedded(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dnsplane-storage-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	emb, err := StartEmbedded(ctx, dir, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer emb.Close()
	cc := emb.ClientConfig()
	cc.Logger = logger
	client, err := Connect(ctx, cc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sharedClient = client
	defer client.Close()
	return m.Run()
}
