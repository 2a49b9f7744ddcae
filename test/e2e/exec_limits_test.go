package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

const (
	// execNofile is the descriptor limit of the report: 60 exec
	// sessions used up a 400-descriptor `up` and DNS failed with it.
	execNofile   = 400
	execSessions = 60
)

// TestExecSessionsKeepUpAlive: exec sessions count against the API
// server's connection limit (filters.ExecSessionConnections each), so
// opening more than fit is refused with a 429 that says why, the process
// keeps descriptors for DNS, which answers all along, and the sessions'
// commands end when their clients go (issue 22 item 3).
func TestExecSessionsKeepUpAlive(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("prlimit (util-linux) is not on PATH: %v", err)
	}
	u := startUp(t, filepath.Join(t.TempDir(), "data"), []string{prlimit, fmt.Sprintf("--nofile=%d:%d", execNofile, execNofile)})
	ns := newNamespace(t, u.Kubeconfig)
	mustKubectl(t, u.Kubeconfig, podManifest("web", "ClusterFirst", ""), "apply", "-n", ns, "-f", "-")
	mustKubectl(t, u.Kubeconfig, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "pod/web")

	cfg := restConfig(t, u.Kubeconfig)
	cs := clientFor(t, u.Kubeconfig)
	arg := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e6)
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	var accepted, refused int
	var refusal error
	done := make(chan error, execSessions)
	for range execSessions {
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name("web").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Command: []string{"sleep", arg}, Stdout: true}, scheme.ParameterCodec)
		ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
		if err != nil {
			t.Fatal(err)
		}
		mine := make(chan error, 1)
		go func() {
			err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard})
			mine <- err
			done <- err
		}()
		// Accepted once its command runs; refused when the stream fails.
		eventually(t, 30*time.Second, 20*time.Millisecond, func() (bool, string) {
			select {
			case err := <-mine:
				refused++
				if refusal == nil {
					refusal = err
				}
				return true, ""
			default:
			}
			if n := len(processesWith(t, arg)); n == accepted+1 {
				accepted++
				return true, ""
			}
			return false, fmt.Sprintf("session %d: neither running nor refused", accepted+refused+1)
		})
	}
	t.Logf("%d exec sessions: %d accepted, %d refused (the first: %v)", execSessions, accepted, refused, refusal)
	if accepted == 0 || refused == 0 {
		t.Errorf("%d accepted and %d refused: want some of each", accepted, refused)
	}
	// Sessions may hold half of the connection limit: the excess gets
	// kube's 429, saying why, and other clients can still connect.
	if refusal != nil && !strings.Contains(refusal.Error(), "too many exec sessions: each counts as 6 connections") {
		t.Errorf("the refusal does not say why: %v", refusal)
	}
	mustKubectl(t, u.Kubeconfig, "", "get", "pod", "-n", ns, "web")
	if open, err := openDescriptors(u.cmd.Process.Pid); err == nil {
		t.Logf("%d of %d descriptors open with %d sessions", open, execNofile, accepted)
		if open > execNofile-64 {
			t.Errorf("%d descriptors open, want at least 64 of %d free", open, execNofile)
		}
	}
	if !u.running() {
		t.Fatalf("the process died: %v", u.err)
	}
	for _, addr := range []string{u.NodeCache, u.ClusterDNS} {
		if got, err := lookupA(addr, "kubernetes.default.svc.cluster.local."); err != nil || got != "10.96.0.1" {
			t.Errorf("with the sessions open, kubernetes.default via %s: %q, %v", addr, got, err)
		}
	}
	// The clients go; so do their commands.
	hangUp()
	for range execSessions {
		if err := <-done; err == nil {
			t.Error("a session ended without an error: its command was not cut off")
		}
	}
	eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
		left := processesWith(t, arg)
		return len(left) == 0, fmt.Sprintf("%d commands left after their clients went", len(left))
	})
}

// processesWith are the pids whose command line has arg.
func processesWith(t *testing.T, arg string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range ents {
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
