package apiserver

import (
	"errors"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// selfSubjectReviewsPath is where `kubectl auth whoami` asks who it is. It
// is not a stored resource, so it is routed on its own and is not in
// discovery; kubectl does not look it up there.
const selfSubjectReviewsPath = "/apis/authentication.k8s.io/v1/selfsubjectreviews"

// serveSelfSubjectReview answers a SelfSubjectReview create with the user
// the request runs as: after impersonation, the impersonated one, which is
// how `kubectl auth whoami --as …` shows impersonation at work. The body is
// not read: a review has no input, and kube takes nothing from it either.
func (s *Server) serveSelfSubjectReview(w http.ResponseWriter, r *http.Request) {
	gr := schema.GroupResource{Group: authenticationv1.GroupName, Resource: "selfsubjectreviews"}
	if r.Method != http.MethodPost {
		writeError(w, s.log, errMethodNotAllowed(r.Method, gr))
		return
	}
	u, ok := authn.UserFrom(r.Context())
	if !ok {
		writeError(w, s.log, apierrors.NewInternalError(errors.New("no user found for request")))
		return
	}
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = v
		}
	}
	writeJSON(w, http.StatusCreated, authenticationv1.SelfSubjectReview{
		TypeMeta:   metav1.TypeMeta{APIVersion: authenticationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectReview"},
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(s.now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: info},
	})
}
