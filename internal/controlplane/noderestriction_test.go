package controlplane_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestNodeRestriction: through the whole request path (authentication,
// Node,RBAC, the write path and the subresource path), a node may write its
// own Node, Lease, CSINode, ResourceSlices, CSRs, the status of pods bound
// to it and tokens bound to them, and gets kube's 403 for another node's,
// as with kube-apiserver's NodeRestriction.
func TestNodeRestriction(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx := t.Context()
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	node, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := ts.Client
	for _, n := range []string{"node-b"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ name, node string }{{"on-a", "node-a"}, {"on-b", "node-b"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Pods that run as a service account, with the projected token volume
	// kube's ServiceAccount admission adds, so a node may ask for their
	// tokens (ServiceAccountNodeAudienceRestriction).
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "runner"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tokenVolume := corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}
	uids := map[string]types.UID{}
	for _, p := range []struct{ name, node string }{{"runs-on-a", "node-a"}, {"runs-on-b", "node-b"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: p.node, ServiceAccountName: "runner", Volumes: []corev1.Volume{tokenVolume},
				Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		created, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[p.name] = created.UID
	}
	token := func(ctx context.Context, pod string, audiences ...string) error {
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences,
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod, UID: uids[pod]}}}
		_, err := node.CoreV1().ServiceAccounts("default").CreateToken(ctx, "runner", tr, metav1.CreateOptions{})
		return err
	}
	// The Node authorizer lets node-a at runner's tokens once its graph
	// has seen runs-on-a (an informer behind the write).
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return token(ctx, "runs-on-a") == nil, nil
	}); err != nil {
		t.Fatalf("token for its own pod: %v", token(ctx, "runs-on-a"))
	}

	for _, tc := range []struct {
		name  string
		write func(context.Context) error
		want  string // "" allowed, else in the 403
	}{
		{"create its Node", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"create a mirror pod owned by its Node", func(ctx context.Context) error {
			n, err := node.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
			if err != nil {
				return err
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static-node-a", Namespace: "default",
				Annotations:     map[string]string{corev1.MirrorPodAnnotationKey: "hash"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: n.UID, Controller: ptr.To(true)}}},
				Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
			// Upstream checks the owner's UID on its informer's Node, which
			// may not have seen the Node created just before (a 404).
			_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
				_, err = node.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
				return !apierrors.IsNotFound(err), nil
			})
			return err
		}, ""},
		{"patch its Node's status", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}]}}`), metav1.PatchOptions{}, "status")
			return err
		}, ""},
		{"create another Node", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-c"}}, metav1.CreateOptions{})
			return err
		}, `node "node-a" is not allowed to modify node "node-c"`},
		{"patch another Node's status", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, []byte(`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}]}}`), metav1.PatchOptions{}, "status")
			return err
		}, `node "node-a" is not allowed to modify node "node-b"`},
		{"label itself a control plane node", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`), metav1.PatchOptions{})
			return err
		}, "is not allowed to modify labels: node-role.kubernetes.io/control-plane"},
		{"create its Lease", func(ctx context.Context) error {
			_, err := node.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"create another node's Lease", func(ctx context.Context) error {
			_, err := node.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}, metav1.CreateOptions{})
			return err
		}, "can only access node lease with the same name as the requesting node"},
		{"status of its pod", func(ctx context.Context) error {
			_, err := node.CoreV1().Pods("default").Patch(ctx, "on-a", types.MergePatchType, []byte(`{"status":{"message":"hi"}}`), metav1.PatchOptions{}, "status")
			return err
		}, ""},
		{"status of another node's pod", func(ctx context.Context) error {
			_, err := node.CoreV1().Pods("default").Patch(ctx, "on-b", types.MergePatchType, []byte(`{"status":{"message":"hi"}}`), metav1.PatchOptions{}, "status")
			return err
		}, `node "node-a" can only update pod status for pods with spec.nodeName set to itself`},
		{"delete another node's pod", func(ctx context.Context) error {
			return node.CoreV1().Pods("default").Delete(ctx, "on-b", metav1.DeleteOptions{})
		}, `node "node-a" can only delete pods with spec.nodeName set to itself`},
		{"create a pod in kube-system", func(ctx context.Context) error {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "kube-system"},
				Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
			_, err := node.CoreV1().Pods("kube-system").Create(ctx, pod, metav1.CreateOptions{})
			return err
		}, "can only create mirror pods"},
		{"token bound to another node's pod", func(ctx context.Context) error {
			return token(ctx, "runs-on-b")
		}, "node requested token bound to a pod scheduled on a different node"},
		{"token for an audience its pod does not use", func(ctx context.Context) error {
			return token(ctx, "runs-on-a", "vault")
		}, `system:node:node-a is not authorized to request tokens for audience "vault"`},
		{"token bound to no pod", func(ctx context.Context) error {
			_, err := node.CoreV1().ServiceAccounts("default").CreateToken(ctx, "runner", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}, "node requested token not bound to a pod"},
		{"evict another node's pod", func(ctx context.Context) error {
			return node.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "on-b", Namespace: "default"}})
		}, "node node-a can only evict pods with spec.nodeName set to itself"},
		{"create another node's CSINode", func(ctx context.Context) error {
			_, err := node.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}, metav1.CreateOptions{})
			return err
		}, "can only access CSINode with the same name as the requesting node"},
		{"create its CSINode", func(ctx context.Context) error {
			_, err := node.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"CSR for another node's name", func(ctx context.Context) error {
			_, err := node.CertificatesV1().CertificateSigningRequests().Create(ctx, nodeCSR(t, "csr-b", "system:node:node-b"), metav1.CreateOptions{})
			return err
		}, "can only create a node CSR with CN=system:node:node-a"},
		{"CSR for its own name", func(ctx context.Context) error {
			_, err := node.CertificatesV1().CertificateSigningRequests().Create(ctx, nodeCSR(t, "csr-a", "system:node:node-a"), metav1.CreateOptions{})
			return err
		}, ""},
		{"ResourceSlice of another node", func(ctx context.Context) error {
			_, err := node.ResourceV1().ResourceSlices().Create(ctx, nodeSlice("slice-b", "node-b"), metav1.CreateOptions{})
			return err
		}, "can only create ResourceSlice with the same NodeName as the requesting node"},
		{"its ResourceSlice", func(ctx context.Context) error {
			_, err := node.ResourceV1().ResourceSlices().Create(ctx, nodeSlice("slice-a", "node-a"), metav1.CreateOptions{})
			return err
		}, ""},
		{"delete its pod", func(ctx context.Context) error {
			return node.CoreV1().Pods("default").Delete(ctx, "on-a", metav1.DeleteOptions{})
		}, ""},
	} {
		// In order: the Node is created before its status is written.
		err := tc.write(ctx)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "":
		case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: got %v, want a 403 with %q", tc.name, err, tc.want)
		}
	}
}

// nodeCSR is a kubelet client certificate request with cn.
func nodeCSR(t *testing.T, name, cn string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
		Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
	}}
}

// nodeSlice is a one-device ResourceSlice of node.
func nodeSlice(name, node string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.example.com", NodeName: &node,
		Pool:    resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "gpu-0"}},
	}}
}
