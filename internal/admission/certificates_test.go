package admission

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/dnsplane/dnsplane/internal/admission/certadmission"
	"github.com/dnsplane/dnsplane/internal/authn"
)

// grants allows user verb on the signers named, as an RBAC rule on
// certificates.k8s.io signers would.
type grants map[string][]string // "user verb" -> signer names

func (g grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetAPIGroup() != "certificates.k8s.io" || a.GetResource() != "signers" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	for _, n := range g[a.GetUser().GetName()+" "+a.GetVerb()] {
		if n == a.GetName() {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (g grants) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(g.Authorize(ctx, a))
}

func (grants) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// csrPEM is a PEM CERTIFICATE REQUEST for CN=alice in orgs.
func csrPEM(t *testing.T, orgs ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestCertificatesCSR(t *testing.T) {
	t.Parallel()
	const apiClient = certificatesv1.KubeAPIServerClientSignerName
	chain := NewChain([]Plugin{{"Certificates", newCertificates(certadmission.New(grants{
		"approver approve": {apiClient},
		"wild approve":     {"example.com/*"},
		"signer sign":      {"example.com/s"},
	}, utilfeature.DefaultFeatureGate))}})
	csr := func(signer string, orgs ...string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: csrPEM(t, orgs...),
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}
	}
	approve := func(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
		c = c.DeepCopy()
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "OK"})
		return c
	}
	issue := func(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
		c = approve(c)
		c.Status.Certificate = []byte("cert")
		return c
	}
	const forbidden = `certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: `
	for _, tc := range []struct {
		name, user, subresource string
		obj, old                *certificatesv1.CertificateSigningRequest
		want                    string // "" admits
	}{
		{name: "create for system:masters", user: "admin", obj: csr(apiClient, "system:masters"),
			want: forbidden + "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"},
		{name: "create for another group", user: "admin", obj: csr(apiClient, "dev")},
		{name: "create for system:masters with another signer", user: "admin", obj: csr("example.com/s", "system:masters")},
		{name: "approve without approve on the signer", user: "bob", subresource: "approval", obj: approve(csr(apiClient)), old: csr(apiClient),
			want: forbidden + `user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{name: "approve with approve on the signer", user: "approver", subresource: "approval", obj: approve(csr(apiClient)), old: csr(apiClient)},
		{name: "approve with the domain wildcard", user: "wild", subresource: "approval", obj: approve(csr("example.com/s")), old: csr("example.com/s")},
		// The stored signer is the one checked, not one the write names.
		{name: "approve renaming the signer", user: "approver", subresource: "approval", obj: approve(csr(apiClient)), old: csr("example.com/s"),
			want: forbidden + `user not permitted to approve requests with signerName "example.com/s"`},
		{name: "issue without sign", user: "approver", subresource: "status", obj: issue(csr("example.com/s")), old: approve(csr("example.com/s")),
			want: forbidden + `user not permitted to sign requests with signerName "example.com/s"`},
		{name: "issue with sign", user: "signer", subresource: "status", obj: issue(csr("example.com/s")), old: approve(csr("example.com/s"))},
		{name: "status write changing nothing", user: "bob", subresource: "status", obj: approve(csr("example.com/s")), old: approve(csr("example.com/s"))},
		{name: "main resource update", user: "bob", obj: csr(apiClient, "system:masters"), old: csr(apiClient, "system:masters")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := authn.WithUser(context.Background(), authn.User{Name: tc.user})
			req := Request{Operation: kadmission.Create, Resource: certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"),
				Subresource: tc.subresource, Name: tc.obj.Name, Object: tc.obj}
			if tc.old != nil {
				req.Operation, req.OldObject = kadmission.Update, tc.old
			}
			err := chain.Validate(ctx, Attributes(ctx, req))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.want):
				t.Fatalf("error %v, want 403 %q", err, tc.want)
			}
		})
	}
}
