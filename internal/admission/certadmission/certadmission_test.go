package certadmission

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/certificates"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// denyAll refuses everything, so only what skips the authorizer passes.
var denyAll = authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", nil
})

func TestValidate(t *testing.T) {
	t.Parallel()
	csrs := schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	old := &certificates.CertificateSigningRequest{Spec: certificates.CertificateSigningRequestSpec{SignerName: "example.com/s"}}
	approved := old.DeepCopy()
	approved.Status.Conditions = []certificates.CertificateSigningRequestCondition{{Type: certificates.CertificateApproved}}
	approval := Attributes{Operation: admission.Update, Resource: csrs, Subresource: "approval", Name: "c", Object: approved, OldObject: old}
	user := authn.WithUser(context.Background(), authn.User{Name: "bob"})
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		a       *Admission
		wantErr bool
	}{
		{"refused", user, New(denyAll, utilfeature.DefaultFeatureGate), true},
		// The server's own writes carry no user.
		{"no user", context.Background(), New(denyAll, utilfeature.DefaultFeatureGate), false},
		// A server without authorization lets everyone approve.
		{"no authorizer", user, New(nil, utilfeature.DefaultFeatureGate), false},
		{"nil admission", user, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.a.Validate(tc.ctx, approval)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Validate = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
