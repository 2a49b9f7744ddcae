package apiserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// bobMayApproveOK allows system:masters everything and bob every verb on
// CSRs, their subresources and ClusterTrustBundles, but "approve" on the
// signer example.com/ok only (and no "sign" or "attest"): a stand-in for
// RBAC.
var bobMayApproveOK = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch {
	case slices.Contains(a.GetUser().GetGroups(), "system:masters"):
		return authorizer.DecisionAllow, "", nil
	case a.GetUser().GetName() != "bob":
	case a.GetResource() == "certificatesigningrequests", a.GetResource() == "clustertrustbundles",
		a.GetResource() == "signers" && a.GetVerb() == "approve" && a.GetName() == "example.com/ok":
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

// TestCertificateAdmissionThroughTheServer: kube-apiserver's certificate
// admission plugins run on CSR creates and on writes to /approval and
// /status. Before, bob could approve for any signer and write a
// certificate, and the admin could ask for a system:masters client
// certificate.
func TestCertificateAdmissionThroughTheServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := startRunning(ctx, t.TempDir(), Config{Authorizer: bobMayApproveOK})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Stop(context.Background()) })
	adminCfg, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	bobCfg := rest.CopyConfig(adminCfg)
	bobCfg.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
	admin := kubernetes.NewForConfigOrDie(adminCfg).CertificatesV1().CertificateSigningRequests()
	bob := kubernetes.NewForConfigOrDie(bobCfg).CertificatesV1().CertificateSigningRequests()

	csr := func(name, signer string, orgs ...string) *certificatesv1.CertificateSigningRequest {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name, Organization: orgs}}, key)
		if err != nil {
			t.Fatal(err)
		}
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
				Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})}}
	}
	forbidden := func(what string, err error, want string) {
		t.Helper()
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("%s: %v, want the 403 %q", what, err, want)
		}
	}
	approve := func(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"})
		return c
	}

	_, err = admin.Create(ctx, csr("masters", certificatesv1.KubeAPIServerClientSignerName, "system:masters"), metav1.CreateOptions{})
	forbidden("admin asks for system:masters", err,
		`certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`)

	no, err := admin.Create(ctx, csr("no", "example.com/no"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bob.UpdateApproval(ctx, "no", approve(no), metav1.UpdateOptions{})
	forbidden("bob approves for example.com/no", err,
		`certificatesigningrequests.certificates.k8s.io "no" is forbidden: user not permitted to approve requests with signerName "example.com/no"`)

	// A patch and a server-side apply of /approval are updates too.
	_, err = bob.Patch(ctx, "no", types.MergePatchType, []byte(`{"status":{"conditions":[{"type":"Approved","status":"True","reason":"Patch"}]}}`),
		metav1.PatchOptions{}, "approval")
	forbidden("bob patches an approval for example.com/no", err,
		`certificatesigningrequests.certificates.k8s.io "no" is forbidden: user not permitted to approve requests with signerName "example.com/no"`)
	_, err = bob.Patch(ctx, "no", types.ApplyPatchType,
		[]byte(`{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"no"},"status":{"conditions":[{"type":"Approved","status":"True","reason":"Apply"}]}}`),
		metav1.PatchOptions{FieldManager: "bob"}, "approval")
	forbidden("bob applies an approval for example.com/no", err,
		`certificatesigningrequests.certificates.k8s.io "no" is forbidden: user not permitted to approve requests with signerName "example.com/no"`)

	ok, err := admin.Create(ctx, csr("ok", "example.com/ok"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err = bob.UpdateApproval(ctx, "ok", approve(ok), metav1.UpdateOptions{}); err != nil {
		t.Fatalf("bob approves for example.com/ok: %v", err)
	}
	// A signer's write: the Failed condition (a certificate would need a
	// valid chain before admission runs).
	ok.Status.Conditions = append(ok.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "Test"})
	_, err = bob.UpdateStatus(ctx, ok, metav1.UpdateOptions{})
	forbidden("bob signs for example.com/ok", err,
		`certificatesigningrequests.certificates.k8s.io "ok" is forbidden: user not permitted to sign requests with signerName "example.com/ok"`)

	bundle := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:ok:b"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/ok", TrustBundle: caPEM(t)}}
	_, err = kubernetes.NewForConfigOrDie(bobCfg).CertificatesV1().ClusterTrustBundles().Create(ctx, bundle, metav1.CreateOptions{})
	forbidden("bob publishes a bundle for example.com/ok", err,
		`clustertrustbundles.certificates.k8s.io "example.com:ok:b" is forbidden: user not permitted to attest for signerName "example.com/ok"`)
	if _, err := kubernetes.NewForConfigOrDie(adminCfg).CertificatesV1().ClusterTrustBundles().Create(ctx, bundle, metav1.CreateOptions{}); err != nil {
		t.Errorf("the admin publishes a bundle: %v", err)
	}
}

// caPEM is a self-signed CA certificate in PEM, a valid trust bundle.
func caPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
