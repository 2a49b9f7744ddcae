package schedulerrole_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/controlplane/schedulerrole"
)

// TestSchedulerRunsAsKubeScheduler: the scheduler of `up` is
// system:kube-scheduler, not the admin, and binds pods under Node,RBAC
// with what upstream's bootstrap policy grants that user.
func TestSchedulerRunsAsKubeScheduler(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Roles: []controlplane.Role{schedulerrole.New()}})
	user, groups := controlplanetest.ClientCertUser(t, filepath.Join(ts.DataDir, "pki", "scheduler.kubeconfig"))
	if user != "system:kube-scheduler" || len(groups) != 0 {
		t.Errorf("scheduler identity %q %q, want system:kube-scheduler with no group", user, groups)
	}
	ctx := t.Context()
	n, err := ts.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	n.Status.Capacity = n.Status.Allocatable
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if _, err := ts.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if _, err := ts.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := ts.Client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "n1", nil
	}); err != nil {
		t.Fatalf("the scheduler bound no pod: %v", err)
	}
}
