package admission

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/dnsplane/dnsplane/internal/admission/certadmission"
	"github.com/dnsplane/dnsplane/internal/authn"
)

// attesters allows "attest" on example.com/s to the user "attester" only.
var attesters = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "attester" && a.GetVerb() == "attest" && a.GetResource() == "signers" && a.GetName() == "example.com/s" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

func TestCertificatesClusterTrustBundle(t *testing.T) {
	t.Parallel()
	chain := NewChain([]Plugin{{"Certificates", newCertificates(certadmission.New(attesters, utilfeature.DefaultFeatureGate))}})
	signed := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:s:b"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/s", TrustBundle: "x"}}
	relabelled := signed.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	unsigned := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: "x"}}
	for _, tc := range []struct {
		name, user string
		obj, old   *certificatesv1.ClusterTrustBundle
		want       string // "" admits
	}{
		{"create without attest", "bob", signed, nil,
			`clustertrustbundles.certificates.k8s.io "example.com:s:b" is forbidden: user not permitted to attest for signerName "example.com/s"`},
		{"update without attest", "bob", relabelled, signed,
			`clustertrustbundles.certificates.k8s.io "example.com:s:b" is forbidden: user not permitted to attest for signerName "example.com/s"`},
		{"create with attest", "attester", signed, nil, ""},
		{"no signer", "bob", unsigned, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := authn.WithUser(context.Background(), authn.User{Name: tc.user})
			req := Request{Operation: kadmission.Create, Resource: certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles"), Name: tc.obj.Name, Object: tc.obj}
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
