package storage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv makes the test binary act as the process that gets killed: see TestMain.
const crashChildEnv = "DNSPLANE_STORAGE_CRASH_CHILD_DIR"

// crashChild writes keys to an embedded etcd in dir forever, printing each key once its
// create has been acknowledged, until it is killed.
func crashChild(dir string) int {
	ctx := context.Background()
	emb, err := StartEmbedded(ctx, dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	client, err := Connect(ctx, emb.ClientConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := New(client, "/registry")
	for i := 0; ; i++ {
		key := "configmaps/ns/c" + strconv.Itoa(i)
		if _, err := s.Create(ctx, key, []byte("v"+strconv.Itoa(i))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(key) // stdout is unbuffered: the parent sees it at once
	}
}

// TestEmbeddedCrashKeepsAcknowledgedWrites SIGKILLs a process in the middle of a stream
// of creates and checks, after restarting etcd on the same data dir, that every create
// the process saw acknowledged is there.
func TestEmbeddedCrashKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(stdout)
	killed := false
	for sc.Scan() {
		acked = append(acked, sc.Text())
		if len(acked) == 300 && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	if err := cmd.Wait(); !killed || err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended with %v after %d acknowledged creates, want it killed after 300", err, len(acked))
	}

	emb := startEmbedded(t, dir)
	defer emb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, err := Connect(ctx, emb.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s := New(client, "/registry")
	for _, key := range acked {
		if _, err := s.Get(ctx, key); err != nil {
			t.Errorf("acknowledged create of %s lost in the crash: %v", key, err)
		}
	}
	t.Logf("%d acknowledged creates survived SIGKILL", len(acked))
}
