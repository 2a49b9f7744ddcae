package storage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func startEmbedded(t *testing.T, dir string) *Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	emb, err := StartEmbedded(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return emb
}

func TestEmbeddedRestartKeepsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := testCtx(t)

	emb := startEmbedded(t, dir)
	client, err := Connect(ctx, emb.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := New(client, "/registry")
	want := map[string]KV{}
	for i := range 30 {
		kv := mustCreate(t, s, fmt.Sprintf("pods/ns/p%02d", i), fmt.Sprintf("v%d", i))
		want[kv.Key] = kv
	}
	upd, err := s.Update(ctx, "pods/ns/p00", []byte("updated"), want["pods/ns/p00"].ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	upd.CreateRevision = want[upd.Key].CreateRevision // Update does not return it
	want[upd.Key] = upd
	if _, err := s.Delete(ctx, "pods/ns/p01", 0); err != nil {
		t.Fatal(err)
	}
	delete(want, "pods/ns/p01")
	rev, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client.Close()
	if err := emb.Close(); err != nil {
		t.Fatal(err)
	}

	emb = startEmbedded(t, dir)
	defer emb.Close()
	client, err = Connect(ctx, emb.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s = New(client, "/registry")
	res, err := s.List(ctx, "pods/", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != len(want) {
		t.Fatalf("after restart %d items, want %d", len(res.Items), len(want))
	}
	for _, kv := range res.Items {
		w := want[kv.Key]
		if !bytes.Equal(kv.Value, w.Value) || kv.ModRevision != w.ModRevision || kv.CreateRevision != w.CreateRevision {
			t.Errorf("after restart %s = %q@%d, want %q@%d", kv.Key, kv.Value, kv.ModRevision, w.Value, w.ModRevision)
		}
	}
	// Revisions continue where they stopped, so resourceVersions never repeat.
	if after, err := s.CurrentRevision(ctx); err != nil || after < rev {
		t.Fatalf("revision after restart = %d, %v; before %d", after, err, rev)
	}
}

func TestEmbeddedDataDirInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	emb := startEmbedded(t, dir)
	defer emb.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	second, err := StartEmbedded(ctx, dir, nil)
	if err == nil {
		second.Close()
		t.Fatal("second etcd on the same data dir started")
	}
	if !strings.Contains(err.Error(), "in use") {
		t.Fatalf("err = %v, want it to say the data dir is in use", err)
	}
}

func TestEmbeddedListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, ep := range sharedClient.Endpoints() {
		host, _, err := net.SplitHostPort(strings.TrimPrefix(ep, "https://"))
		if err != nil || host != "127.0.0.1" {
			t.Errorf("endpoint %s is not on 127.0.0.1", ep)
		}
	}
}

func TestConnectUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := "http://" + l.Addr().String()
	l.Close() // nothing listens there any more

	start := time.Now()
	_, err = Connect(testCtx(t), ClientConfig{Endpoints: []string{ep}, DialTimeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), ep) {
		t.Errorf("error %q does not name the endpoint", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Connect took %s with a 300ms dial timeout", took)
	}
}

func TestConnectConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  ClientConfig
		want string
	}{
		{"no endpoints", ClientConfig{Endpoints: []string{" ", ""}}, "no endpoints"},
		{"cert without key", ClientConfig{Endpoints: []string{"https://127.0.0.1:1"}, CertFile: "c.pem"}, "together"},
		{"files with plaintext endpoint", ClientConfig{Endpoints: []string{"http://127.0.0.1:1"}, CAFile: "ca.pem"}, "not https"},
		{"missing CA file", ClientConfig{Endpoints: []string{"https://127.0.0.1:1"}, CAFile: "/nonexistent/ca.pem"}, "CA file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Connect(testCtx(t), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestZapBridge(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	zl := newZapLogger(logger, zapcore.WarnLevel, nil).With(zap.String("member", "m1"))

	zl.Info("chatty startup detail")
	zl.Warn("disk slow", zap.Duration("took", 1500*time.Millisecond), zap.Int64("rev", 42))
	zl.Warn("simple token is not cryptographically signed")
	out := buf.String()

	if strings.Contains(out, "chatty") {
		t.Errorf("info entry passed a warn-level bridge:\n%s", out)
	}
	if !strings.Contains(out, `level=WARN msg="disk slow" member=m1 took=1.5s rev=42`) {
		t.Errorf("warn entry not forwarded with its fields:\n%s", out)
	}
	if strings.Contains(out, "simple token") {
		t.Errorf("benign warning not demoted:\n%s", out)
	}
}
