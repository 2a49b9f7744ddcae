package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// shared is a client of the control plane the tests here share (the
// garbage collector's discovery and informers take seconds to start);
// TestMain starts and stops it.
var shared kubernetes.Interface

func TestMain(m *testing.M) {
	os.Exit(runWithControlPlane(m))
}

func runWithControlPlane(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dnsplane-controllers-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The deletion controllers run beside the tests' own, as under
	// `dnsplane apiserver`.
	cp, err := controlplane.Start(ctx, controlplane.Config{DataDir: dir, ShutdownTimeout: 10 * time.Second,
		Roles: []controlplane.Role{controllersrole.New(controllers.Options{})}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the control plane:", err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}()
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared = kubernetes.NewForConfigOrDie(cfg)
	return m.Run()
}

func client(*testing.T) kubernetes.Interface { return shared }

func namespace(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	name = fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%100000)
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// ownedReplicaSet creates a Deployment and a ReplicaSet it owns, as the
// deployment controller would (it does not run here).
func ownedReplicaSet(t *testing.T, c kubernetes.Interface, ns, name string) *appsv1.Deployment {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	spec := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: spec}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-rs",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: spec}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func gone(err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// TestOrphanKeepsDependents: kubectl delete --cascade=orphan. The API
// server leaves the Deployment with the orphan finalizer; the garbage
// collector removes the ReplicaSet's owner reference, then the finalizer,
// and the Deployment goes.
func TestOrphanKeepsDependents(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	ns := namespace(t, c, "orphan")
	ownedReplicaSet(t, c, ns, "web")
	if err := c.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "deployment deleted", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return gone(err)
	})
	rs, err := c.AppsV1().ReplicaSets(ns).Get(ctx, "web-rs", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the orphaned ReplicaSet was deleted: %v", err)
	}
	if len(rs.OwnerReferences) != 0 {
		t.Errorf("orphaned ReplicaSet still owned: %v", rs.OwnerReferences)
	}
}

// TestForegroundWaitsForDependents: --cascade=foreground. The Deployment
// stays, with foregroundDeletion, until the garbage collector has deleted
// the ReplicaSet.
func TestForegroundWaitsForDependents(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	ns := namespace(t, c, "foreground")
	ownedReplicaSet(t, c, ns, "web")
	if err := c.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	d, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// The collector was quick; the order below still holds.
	case err != nil:
		t.Fatal(err)
	case !slices.Contains(d.Finalizers, metav1.FinalizerDeleteDependents) || d.DeletionTimestamp == nil:
		t.Errorf("foreground delete left %v, deletionTimestamp %v", d.Finalizers, d.DeletionTimestamp)
	}
	testkit.Poll(t, "deployment deleted after its ReplicaSet", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if ok, err := gone(err); !ok || err != nil {
			return ok, err
		}
		switch _, err := c.AppsV1().ReplicaSets(ns).Get(ctx, "web-rs", metav1.GetOptions{}); {
		case err == nil:
			return false, errors.New("deployment gone before its ReplicaSet")
		case !apierrors.IsNotFound(err):
			return false, err
		}
		return true, nil
	})
}

// TestBackgroundCollectsDependents: the default. The Deployment goes at
// once, the ReplicaSet after it.
func TestBackgroundCollectsDependents(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	ns := namespace(t, c, "background")
	ownedReplicaSet(t, c, ns, "web")
	if err := c.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("background delete left the deployment: %v", err)
	}
	testkit.Poll(t, "ReplicaSet collected", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.AppsV1().ReplicaSets(ns).Get(ctx, "web-rs", metav1.GetOptions{})
		return gone(err)
	})
}

// TestNamespaceDeletion: kubectl delete ns. Terminating, then the
// namespace controller deletes what is in it and finalizes it.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	ns := namespace(t, c, "doomed")
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ownedReplicaSet(t, c, ns, "web")
	if err := c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil && got.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("deleted namespace is %q", got.Status.Phase)
	}
	testkit.Poll(t, "namespace emptied and deleted", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return gone(err)
	})
	for what, err := range map[string]error{
		"configmap":  getErr(c.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})),
		"pod":        getErr(c.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})),
		"replicaset": getErr(c.AppsV1().ReplicaSets(ns).Get(ctx, "web-rs", metav1.GetOptions{})),
	} {
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s outlived its namespace: %v", what, err)
		}
	}
}

func getErr[T any](_ T, err error) error { return err }

// TestNamespaceWithoutFinalizer is a namespace stored before dnsplane added
// the kubernetes finalizer on create: deleting it leaves it Terminating
// with its contents, as kube-apiserver would, and giving it the finalizer
// through /finalize (docs/apiserver.md, "Namespaces") lets the namespace
// controller finish.
func TestNamespaceWithoutFinalizer(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	ns := namespace(t, c, "old")
	cur, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Finalizers = nil
	if _, err := c.CoreV1().Namespaces().Finalize(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err = c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || cur.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("deleted namespace without finalizer: %v %v", err, cur)
	}
	cur.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	if _, err := c.CoreV1().Namespaces().Finalize(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("giving a terminating namespace the finalizer: %v", err)
	}
	testkit.Poll(t, "namespace emptied and deleted", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return gone(err)
	})
	if _, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("configmap outlived its namespace: %v", err)
	}
}
