package controllersrole_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestControllersUseServiceAccountCredentials: with
// --use-service-account-credentials (what `up` runs) the controllers are
// system:kube-controller-manager, which may not create pods, and each
// controller is its own service account in kube-system: the ReplicaSet
// controller creates its pods as kube-system/replicaset-controller, which
// upstream's bootstrap policy binds to system:controller:replicaset-controller.
func TestControllersUseServiceAccountCredentials(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Roles: []controlplane.Role{controllersrole.New(controllers.Options{
		Controllers: []string{"replicaset-controller"}, UseServiceAccountCredentials: true,
	})}})
	user, _ := controlplanetest.ClientCertUser(t, filepath.Join(ts.DataDir, "pki", "controller-manager.kubeconfig"))
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
