package controllers_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/leaderelect"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// startControlPlane is a control plane of the test's own running the
// controllers selection.
func startControlPlane(t *testing.T, selection []string) (*controlplane.ControlPlane, kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Config{DataDir: t.TempDir(), ShutdownTimeout: 10 * time.Second,
		Roles: []controlplane.Role{controllersrole.New(controllers.Options{Controllers: selection})}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cp, kubernetes.NewForConfigOrDie(cfg)
}

// TestAllControllers: with every controller (what `up` runs), a new
// namespace gets its default ServiceAccount and kube-root-ca.crt, a
// Deployment its ReplicaSet and pods, and an approved CSR a certificate
// signed by the cluster CA.
func TestAllControllers(t *testing.T) {
	t.Parallel()
	_, c := startControlPlane(t, []string{"*"})
	ctx := context.Background()
	ns := namespace(t, c, "all")
	// A pod bound to a Node that does not exist: the pod garbage collector
	// force-deletes it after its 40 s quarantine (checked last).
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan"},
		Spec: corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	testkit.Poll(t, "default ServiceAccount and kube-root-ca.crt", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, errSA := c.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		_, errCM := c.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return errSA == nil && errCM == nil, nil
	})

	sel := map[string]string{"app": "web"}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "ReplicaSet with 3 pods", 90*time.Second, func(ctx context.Context) (bool, error) {
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(rss.Items) != 1 {
			return false, err
		}
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 3, nil
	})

	csr := newCSR(t)
	created, err := c.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Conditions = append(created.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test"})
	if _, err := c.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, created.Name, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "CSR signed", 90*time.Second, func(ctx context.Context) (bool, error) {
		got, err := c.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
		return err == nil && len(got.Status.Certificate) > 0, err
	})
	testkit.Poll(t, "pod on a missing node collected", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Pods(ns).Get(ctx, "orphan", metav1.GetOptions{})
		return gone(err)
	})
}

// newCSR is a client certificate request for the kube-apiserver-client
// signer.
func newCSR(t *testing.T) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane", Organization: []string{"dev"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "jane"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		}}
}

// TestLeaderElection: two replicas of the controllers; one holds the
// kube-controller-manager Lease, and when it stops the other takes over.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	cp, c := startControlPlane(t, []string{})
	fast := leaderelect.Durations{Lease: 3 * time.Second, RenewDeadline: 2 * time.Second, Retry: 200 * time.Millisecond}
	type replica struct {
		cancel context.CancelFunc
		done   chan error
	}
	start := func() replica {
		ctx, cancel := context.WithCancel(context.Background())
		r := replica{cancel: cancel, done: make(chan error, 1)}
		comp := &controllers.Manager{Kubeconfig: cp.Kubeconfig, Logger: slog.New(slog.DiscardHandler), LeaderElect: true, LeaseDurations: fast,
			Options: controllers.Options{Controllers: []string{"serviceaccount-controller"}}}
		go func() { r.done <- comp.Run(ctx) }()
		return r
	}
	a := start()
	t.Cleanup(a.cancel)

	holder := func(ctx context.Context) (string, error) {
		l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, controllers.LeaseName, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return "", nil //nolint:nilerr // not created yet
		}
		return *l.Spec.HolderIdentity, nil
	}
	var first string
	testkit.Poll(t, "a leads", 90*time.Second, func(ctx context.Context) (bool, error) {
		var err error
		first, err = holder(ctx)
		return first != "", err
	})
	b := start()
	t.Cleanup(b.cancel)
	ns := namespace(t, c, "elected")
	testkit.Poll(t, "the leader's serviceaccount controller acts", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if h, err := holder(context.Background()); err != nil || h != first {
		t.Fatalf("the Lease moved to %q (%v) while its holder %q ran", h, err, first)
	}
	// The leader stops and releases the Lease; the standby takes it.
	a.cancel()
	if err := <-a.done; err != nil {
		t.Errorf("the leader stopped with %v", err)
	}
	testkit.Poll(t, "the standby leads", 90*time.Second, func(ctx context.Context) (bool, error) {
		h, err := holder(ctx)
		return h != "" && h != first, err
	})
	ns2 := namespace(t, c, "elected2")
	testkit.Poll(t, "the new leader's serviceaccount controller acts", 90*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts(ns2).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	b.cancel()
	if err := <-b.done; err != nil {
		t.Errorf("replica b stopped with %v", err)
	}
}
