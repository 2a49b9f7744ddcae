package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

// TestExec runs `dnsplane exec` as its own process against an in-process
// control plane, with the pod's files written where the node agent of `up
// --data-dir` would write them and the pod's sandbox started as that agent
// starts it (internal/podsandbox).
func TestExec(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount namespaces)")
	}
	ctx := t.Context()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	c := ts.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, finalizers ...string) *corev1.Pod {
		p, err := c.CoreV1().Pods("ns1").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
			Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const (
		resolv = "search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
		hosts  = "127.0.0.1\tlocalhost\n10.244.0.7\tweb.ns1.exec-test.example web\n"
	)
	web := pod("web")
	pod("nofiles")
	gone := pod("gone", "example.com/hold")
	if err := c.CoreV1().Pods("ns1").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Let the namespace's pod go when the control plane stops.
		p, err := c.CoreV1().Pods("ns1").Get(ctx, "gone", metav1.GetOptions{})
		if err == nil {
			p.Finalizers = nil
			_, _ = c.CoreV1().Pods("ns1").Update(ctx, p, metav1.UpdateOptions{})
		}
	})
	stateDir := filepath.Join(ts.DataDir, "agent") // where --data-dir looks
	for _, p := range []*corev1.Pod{web, gone} {
		dir := podfiles.Dir(stateDir, "ns1", p.Name, p.UID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{podfiles.ResolvConf: resolv, podfiles.Hosts: hosts} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	alloc, err := podsandbox.NewAllocator(t.TempDir(), podsandbox.DefaultFirstBase, podsandbox.DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	boxes, err := podsandbox.NewManager(podsandbox.Config{StateDir: stateDir, Hide: []string{ts.DataDir}, Allocator: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(boxes.Close)
	if err := boxes.Ensure(ctx, podsandbox.Pod{Namespace: "ns1", Name: "web", UID: web.UID, Hostname: "web",
		Dir: podfiles.Dir(stateDir, "ns1", "web", web.UID)}); err != nil {
		t.Fatal(err)
	}

	dnsplane := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), asDnsplaneEnv+"=1")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := dnsplane("exec", "--data-dir", ts.DataDir, "-n", "ns1", "web", "--", "cat", "/etc/resolv.conf")
	if code != 0 || out != resolv {
		t.Errorf("cat: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// --kubeconfig and --state-dir instead of --data-dir.
	out, errOut, code = dnsplane("exec", "--kubeconfig", ts.Kubeconfig, "--state-dir", stateDir, "-n", "ns1", "web", "--", "getent", "hosts", "web.ns1.exec-test.example")
	if code != 0 || !strings.HasPrefix(out, "10.244.0.7") {
		t.Errorf("getent: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The pod sets no user: the command runs as nobody, with no
	// capabilities, and the data dir (the CA's key) is out of its reach
	// while the pod's files on /etc are not (issue 22 item 3).
	out, errOut, code = dnsplane("exec", "--data-dir", ts.DataDir, "-n", "ns1", "web", "--", "id", "-u")
	if code != 0 || out != "65534\n" {
		t.Errorf("id -u: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	caKey := filepath.Join(ts.DataDir, "pki", "ca.key")
	if _, err := os.Stat(caKey); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = dnsplane("exec", "--data-dir", ts.DataDir, "-n", "ns1", "web", "--", "cat", "/etc/hosts", caKey)
	if code == 0 || out != hosts || (!strings.Contains(errOut, caKey+": Permission denied") && !strings.Contains(errOut, caKey+": No such file")) {
		t.Errorf("cat ca.key: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The command's exit status and flags pass through.
	if _, errOut, code = dnsplane("exec", "--data-dir", ts.DataDir, "-n", "ns1", "web", "--", "sh", "-c", "exit 5"); code != 5 {
		t.Errorf("exit 5: exit %d, stderr %q", code, errOut)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-n", "ns1", "nosuch", "--", "true"}, exitInvalid, "error: pod ns1/nosuch not found"},
		{[]string{"-n", "ns1", "nofiles", "--", "true"}, exitInvalid,
			"error: pod ns1/nofiles has no resolv.conf yet in " + stateDir + ": is its node's agent running? (spec.nodeName=node-1)"},
		{[]string{"-n", "ns1", "gone", "--", "true"}, exitInvalid, "error: pod ns1/gone is being deleted"},
		{[]string{"-n", "ns1", "web", "true"}, exitUsage, "error: want POD -- COMMAND [ARG...]"},
	} {
		_, errOut, code := dnsplane(append([]string{"exec", "--data-dir", ts.DataDir}, tc.args...)...)
		if code != tc.code || strings.TrimSpace(errOut) != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}
