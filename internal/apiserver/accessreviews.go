package apiserver

import (
	"errors"
	"fmt"
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/scheme"
	authorizationapi "k8s.io/kubernetes/pkg/apis/authorization"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// selfSubjectAccessReviewsPath is where `kubectl auth can-i` asks whether
// it may do something. Like selfsubjectreviews, it is not a stored
// resource: routed on its own and not in discovery (kubectl does not look
// it up there).
const selfSubjectAccessReviewsPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

// serveSelfSubjectAccessReview answers a SelfSubjectAccessReview with
// kube-apiserver's own REST code (pkg/registry/authorization/
// selfsubjectaccessreview: upstream's validation, the attributes the spec
// names, the request's user, the server's authorizer), so `kubectl auth
// can-i` says what the next request would meet. Without an authorizer
// (tests), everything is allowed, as the server then allows it.
func (s *Server) serveSelfSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	gr := schema.GroupResource{Group: authorizationv1.GroupName, Resource: "selfsubjectaccessreviews"}
	if r.Method != http.MethodPost {
		writeErrorNegotiated(w, r, s.log, errMethodNotAllowed(r.Method, gr))
		return
	}
	u, ok := authn.UserFrom(r.Context())
	if !ok {
		writeErrorNegotiated(w, r, s.log, apierrors.NewInternalError(errors.New("no user found for request")))
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeErrorNegotiated(w, r, s.log, err)
		return
	}
	// JSON or protobuf, as client-go sends it; the review is not stored,
	// so client-go's (non-strict) decoding is upstream's.
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &authorizationv1.SelfSubjectAccessReview{})
	if err != nil {
		writeErrorNegotiated(w, r, s.log, apierrors.NewBadRequest(fmt.Sprintf("decoding the SelfSubjectAccessReview: %v", err)))
		return
	}
	in, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		writeErrorNegotiated(w, r, s.log, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectAccessReview: %T", obj)))
		return
	}
	internal := &authorizationapi.SelfSubjectAccessReview{}
	if err := upstream.Convert(in, internal); err != nil {
		writeErrorNegotiated(w, r, s.log, err)
		return
	}
	// The user and the request info upstream's REST reads from the
	// context (its declarative validation takes the version from it).
	ctx := request.WithUser(r.Context(), authz.UserInfo(u))
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Path: r.URL.Path, Verb: "create",
		APIPrefix: "apis", APIGroup: gr.Group, APIVersion: "v1", Resource: gr.Resource})
	out, err := selfsubjectaccessreview.NewREST(s.accessAuthorizer(), upstream.Scheme()).Create(ctx, internal, nil, &metav1.CreateOptions{})
	if err != nil {
		writeErrorNegotiated(w, r, s.log, err)
		return
	}
	review := &authorizationv1.SelfSubjectAccessReview{}
	if err := upstream.Convert(out, review); err != nil {
		writeErrorNegotiated(w, r, s.log, err)
		return
	}
	review.TypeMeta = metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectAccessReview"}
	writeJSON(w, http.StatusCreated, review)
}

// accessAuthorizer is what the access reviews ask: the server's
// authorizer, or, without one, one that allows everything.
func (s *Server) accessAuthorizer() authorizer.Authorizer {
	if s.cfg.Authorizer != nil {
		return s.cfg.Authorizer
	}
	return authorizerfactory.NewAlwaysAllowAuthorizer()
}
