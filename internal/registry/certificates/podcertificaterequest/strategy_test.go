package podcertificaterequest

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/clock"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// signers allows "sign" on example.com/s to the user "signer" only.
var signers = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "signer" && a.GetVerb() == "sign" && a.GetResource() == "signers" && a.GetName() == "example.com/s" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

func TestStatusUpdateNeedsSign(t *testing.T) {
	t.Parallel()
	old := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "1"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/s"}}
	denied := old.DeepCopy()
	denied.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
		Reason: "No", Message: "no", LastTransitionTime: metav1.Now()}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		a    authorizer.Authorizer
		obj  *certificatesv1.PodCertificateRequest
		want string // "" admits
	}{
		{"without sign", authn.WithUser(context.Background(), authn.User{Name: "bob"}), signers, denied,
			`spec.signerName: Forbidden: User "bob" is not permitted to "sign" for signer "example.com/s"`},
		{"with sign", authn.WithUser(context.Background(), authn.User{Name: "signer"}), signers, denied, ""},
		// upstream asks only when the status changes.
		{"unchanged status", authn.WithUser(context.Background(), authn.User{Name: "bob"}), signers, old, ""},
		// The server's own writes carry no user.
		{"no user", context.Background(), signers, denied, ""},
		{"no authorizer", authn.WithUser(context.Background(), authn.User{Name: "bob"}), nil, denied, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := New(clock.RealClock{}, tc.a).ValidateStatusUpdate(tc.ctx, tc.obj, old)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.want != "" && (len(errs) != 1 || errs[0].Error() != tc.want):
				t.Fatalf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}
