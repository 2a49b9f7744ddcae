package etcdproc

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// memberEnv makes the test binary act as the child: "member" runs
// RunMember, "hang" reports a phase and never becomes ready.
const memberEnv = "DNSPLANE_ETCDPROC_TEST_CHILD"

// startedEnv names a file a "hang" child creates once it reported its
// phase: the test then knows Start is waiting for readiness.
const startedEnv = "DNSPLANE_ETCDPROC_TEST_STARTED"

func TestMain(m *testing.M) {
	switch os.Getenv(memberEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		// What etcd's Fatal on a full disk looks like from outside.
		fmt.Println(`{"phase":"starting etcd"}`)
		fmt.Fprintln(os.Stderr, `{"level":"ERROR","msg":"failed to commit tx","error":"write db: no space left on device"}`)
		os.Exit(1)
	case "hang":
		// Never ready; stops, as a member does, when stdin closes.
		fmt.Println(`{"phase":"starting etcd"}`)
		if p := os.Getenv(startedEnv); p != "" {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "member":
		fs := flag.NewFlagSet("member", flag.ExitOnError)
		dir := fs.String("data-dir", "", "")
		var tls storage.EmbeddedTLS
		fs.StringVar(&tls.TrustedCAFile, FlagTrustedCAFile, "", "")
		fs.StringVar(&tls.CertFile, FlagCertFile, "", "")
		fs.StringVar(&tls.KeyFile, FlagKeyFile, "", "")
		fs.StringVar(&tls.PeerCertFile, FlagPeerCertFile, "", "")
		fs.StringVar(&tls.PeerKeyFile, FlagPeerKeyFile, "", "")
		_ = fs.Parse(os.Args[1:])
		logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
		if err := RunMember(context.Background(), *dir, tls, os.Stdin, os.Stdout, logger); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// testPKI is the etcd PKI of a test: the member gets its server side, connect
// the client certificate.
type testPKI struct{ *pki.EtcdPKI }

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	p, err := pki.EnsureEtcd(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{p}
}

func (p testPKI) member() storage.EmbeddedTLS {
	return storage.EmbeddedTLS{TrustedCAFile: p.CAFile, CertFile: p.ServerCertFile, KeyFile: p.ServerKeyFile,
		PeerCertFile: p.PeerCertFile, PeerKeyFile: p.PeerKeyFile}
}

func testConfig(t *testing.T, mode, dir string, p testPKI) Config {
	t.Helper()
	t.Setenv(memberEnv, mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Command:      []string{exe},
		DataDir:      dir,
		TLS:          p.member(),
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		ReadyTimeout: 30 * time.Second,
		StopTimeout:  5 * time.Second,
		MinBackoff:   50 * time.Millisecond,
		MaxBackoff:   time.Second,
	}
}

func connect(t *testing.T, eps []string, p testPKI) *storage.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := storage.Connect(ctx, storage.ClientConfig{Endpoints: eps, CAFile: p.CAFile, CertFile: p.ClientCertFile, KeyFile: p.ClientKeyFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return storage.New(c, "/registry")
}

// TestRestartAfterCrash kills the member the way a full disk or an
// out-of-descriptors Fatal does, and checks that it comes back on the same
// data with every acknowledged write.
func TestRestartAfterCrash(t *testing.T) {
	dir := t.TempDir()
	p := newTestPKI(t)
	restarted := make(chan []string, 1)
	cfg := testConfig(t, "member", dir, p)
	cfg.OnRestart = func(eps []string) { restarted <- eps }
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := connect(t, s.Endpoints(), p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := st.Create(ctx, fmt.Sprintf("configmaps/ns/c%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		pid := s.child.cmd.Process.Pid
		s.mu.Unlock()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var eps []string
		select {
		case eps = <-restarted:
		case <-ctx.Done():
			t.Fatalf("member not restarted after kill %d", i+1)
		}
		st = connect(t, eps, p)
		for j := range i + 1 {
			if _, err := st.Get(ctx, fmt.Sprintf("configmaps/ns/c%d", j)); err != nil {
				t.Fatalf("after restart %d: write %d: %v", i+1, j, err)
			}
		}
	}
	if got := s.Restarts(); got != 3 {
		t.Errorf("Restarts() = %d, want 3", got)
	}
}

func TestStartFailures(t *testing.T) {
	populated := populate(t)
	tests := []struct {
		name   string
		mode   string
		damage func(t *testing.T, dir string)
		want   []string
		// damaged: the error is a *storage.DamagedError.
		damaged bool
	}{
		{
			name: "wal deleted", mode: "member", damaged: true,
			damage: func(t *testing.T, dir string) { t.Helper(); must(t, os.RemoveAll(filepath.Join(dir, "member", "wal"))) },
			want:   []string{"write-ahead log member/wal", "restore it from a backup"},
		},
		{
			name: "database page damaged", mode: "member", damaged: true,
			damage: func(t *testing.T, dir string) {
				t.Helper()
				// Past both meta pages: bbolt opens the file and panics
				// reading the pages, in a goroutine, killing the child.
				f, err := os.OpenFile(filepath.Join(dir, "member", "snap", "db"), os.O_WRONLY, 0)
				must(t, err)
				_, err = f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 4096)), 8192)
				must(t, err)
				must(t, f.Close())
			},
			want: []string{"database member/snap/db", "restore it from a backup"},
		},
		{
			name: "exits while starting", mode: "crash", damage: func(*testing.T, string) {},
			want: []string{"exited (exit status 1) while starting etcd", "failed to commit tx: write db: no space left on device"},
		},
		{
			name: "never ready", mode: "hang", damage: func(*testing.T, string) {},
			want: []string{"did not become ready within 2s", "last phase: starting etcd", "docs/operations.md"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-a", populated+"/.", dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			tt.damage(t, dir)
			cfg := testConfig(t, tt.mode, dir, newTestPKI(t))
			cfg.ReadyTimeout = 2 * time.Second
			s, err := Start(context.Background(), cfg)
			if err == nil {
				s.Close()
				t.Fatal("Start succeeded on a damaged data dir")
			}
			for _, w := range append(tt.want, dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var de *storage.DamagedError
			if errors.As(err, &de) != tt.damaged {
				t.Errorf("error %T: DamagedError = %v, want %v", err, !tt.damaged, tt.damaged)
			}
		})
	}
}

// TestStartInterrupted: SIGTERM/Ctrl-C during start-up cancels ctx; Start
// must return within the stop grace even if etcd never becomes ready.
func TestStartInterrupted(t *testing.T) {
	cfg := testConfig(t, "hang", t.TempDir(), newTestPKI(t))
	cfg.ReadyTimeout = time.Hour
	started := filepath.Join(t.TempDir(), "started")
	t.Setenv(startedEnv, started)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		s, err := Start(ctx, cfg)
		if s != nil {
			s.Close()
		}
		errc <- err
	}()
	testkit.PollEvery(t, "the child started", 10*time.Millisecond, 30*time.Second, func(context.Context) (bool, error) {
		_, err := os.Stat(started)
		return err == nil, err
	})
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Start = %v, want context.Canceled", err)
		}
	case <-time.After(cfg.StopTimeout + 5*time.Second):
		t.Fatal("Start did not return after its context was cancelled")
	}
}

// populate returns a data dir written by a member and closed cleanly.
func populate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := newTestPKI(t)
	s, err := Start(context.Background(), testConfig(t, "member", dir, p))
	if err != nil {
		t.Fatal(err)
	}
	st := connect(t, s.Endpoints(), p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 20 {
		if _, err := st.Create(ctx, fmt.Sprintf("configmaps/ns/c%02d", i), []byte(strings.Repeat("x", 200))); err != nil {
			t.Fatal(err)
		}
	}
	must(t, s.Close())
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
