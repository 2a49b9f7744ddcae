package controlplane_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// clientCertUser is the CN and O of the client certificate in kubeconfig.
func clientCertUser(t *testing.T, kubeconfig string) (string, []string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		t.Fatalf("%s has no client certificate", kubeconfig)
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName, leaf.Subject.Organization
}

// TestSchedulerRunsAsKubeScheduler: the scheduler of `up` is
// system:kube-scheduler, not the admin, and binds pods under Node,RBAC
// with what upstream's bootstrap policy grants that user.
func TestSchedulerRunsAsKubeScheduler(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Scheduler: true})
	user, groups := clientCertUser(t, filepath.Join(ts.DataDir, "pki", "scheduler.kubeconfig"))
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

// TestControllersUseServiceAccountCredentials: with
// --use-service-account-credentials (what `up` runs) the controllers are
// system:kube-controller-manager, which may not create pods, and each
// controller is its own service account in kube-system: the ReplicaSet
// controller creates its pods as kube-system/replicaset-controller, which
// upstream's bootstrap policy binds to system:controller:replicaset-controller.
func TestControllersUseServiceAccountCredentials(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Controllers: controllers.Options{
		Controllers: []string{"replicaset-controller"}, UseServiceAccountCredentials: true,
	}})
	user, _ := clientCertUser(t, filepath.Join(ts.DataDir, "pki", "controller-manager.kubeconfig"))
	if user != "system:kube-controller-manager" {
		t.Errorf("controllers' identity %q, want system:kube-controller-manager", user)
	}
	ctx := t.Context()
	labels := map[string]string{"app": "rs"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
	}
	if _, err := ts.Client.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := ts.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=rs"})
		return err == nil && len(pods.Items) == 2, nil
	}); err != nil {
		t.Fatalf("the ReplicaSet controller created no pods: %v", err)
	}
	if _, err := ts.Client.CoreV1().ServiceAccounts("kube-system").Get(ctx, "replicaset-controller", metav1.GetOptions{}); err != nil {
		t.Errorf("the ReplicaSet controller's service account: %v", err)
	}
}
