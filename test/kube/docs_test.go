package kube

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The markers of docs/kubernetes.md: the ```sh block after each such line
// is run by this test, against the real kube-apiserver.
const (
	docsFile        = "docs/kubernetes.md"
	installMarker   = "<!-- test: kubernetes-install -->"
	uninstallMarker = "<!-- test: kubernetes-uninstall -->"
)

// docsBlocks returns the ```sh blocks of docs/kubernetes.md that follow a
// line that is marker (blank lines between them allowed).
func docsBlocks(t testing.TB, marker string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(moduleDir, docsFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var block strings.Builder
	state := 0 // 0 outside, 1 after the marker, 2 in its block
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.TrimSpace(line) == marker:
			state = 1
		case state == 1 && strings.TrimSpace(line) == "":
		case state == 1 && strings.TrimSpace(line) == "```sh":
			state = 2
			block.Reset()
		case state == 1:
			t.Fatalf("%s: %q is not followed by a ```sh block", docsFile, marker)
		case state == 2 && strings.TrimSpace(line) == "```":
			blocks = append(blocks, block.String())
			state = 0
		case state == 2:
			block.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// runBlocks runs each block with sh -e in the module's directory, as a
// user in a checkout of the repository, with kubectl on PATH as the admin.
func (c *cluster) runBlocks(ctx context.Context, t testing.TB, blocks []string) {
	t.Helper()
	for _, b := range blocks {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-e", "-x", "-c", b)
		cmd.Dir = moduleDir
		cmd.Env = append(os.Environ(), "KUBECONFIG="+c.admin, "HOME="+c.dir)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s block failed: %v\n%s\n%s", docsFile, err, b, out)
		}
		t.Logf("%s:\n%s", docsFile, out)
	}
}

// checkNothingLeft waits until nothing of the install is left: no
// namespace dnsplane-system (and so nothing in it), no CRD and so no DNS
// object, no webhook configuration, and no cluster role, binding, or
// role in another namespace named dnsplane*.
func (c *cluster) checkNothingLeft(ctx context.Context, t testing.TB) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		if _, err := c.cs.CoreV1().Namespaces().Get(ctx, installNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "namespace "+installNamespace)
		}
		ext, err := c.cs.Discovery().ServerResourcesForGroupVersion("operator.dnsplane.io/v1")
		if err == nil && ext != nil {
			left = append(left, "API operator.dnsplane.io/v1")
		}
		if _, err := c.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, webhookConfig, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "MutatingWebhookConfiguration "+webhookConfig)
		}
		if _, err := c.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, webhookConfig, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "ValidatingWebhookConfiguration "+webhookConfig)
		}
		crs, err := c.cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, r := range crs.Items {
			if strings.HasPrefix(r.Name, "dnsplane") {
				left = append(left, "ClusterRole "+r.Name)
			}
		}
		crbs, err := c.cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, r := range crbs.Items {
			if strings.HasPrefix(r.Name, "dnsplane") {
				left = append(left, "ClusterRoleBinding "+r.Name)
			}
		}
		roles, err := c.cs.RbacV1().Roles("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, r := range roles.Items {
			if strings.HasPrefix(r.Name, "dnsplane") {
				left = append(left, fmt.Sprintf("Role %s/%s", r.Namespace, r.Name))
			}
		}
		rbs, err := c.cs.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, r := range rbs.Items {
			if strings.HasPrefix(r.Name, "dnsplane") {
				left = append(left, fmt.Sprintf("RoleBinding %s/%s", r.Namespace, r.Name))
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("after the uninstall commands, left behind: %s", strings.Join(left, ", "))
	}
}
