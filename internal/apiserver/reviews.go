package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes/scheme"
	authenticationapi "k8s.io/kubernetes/pkg/apis/authentication"
	authorizationapi "k8s.io/kubernetes/pkg/apis/authorization"
	"k8s.io/kubernetes/pkg/registry/authentication/selfsubjectreview"
	"k8s.io/kubernetes/pkg/registry/authentication/tokenreview"
	"k8s.io/kubernetes/pkg/registry/authorization/localsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectrulesreview"
	"k8s.io/kubernetes/pkg/registry/authorization/subjectaccessreview"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/discovery"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// reviewKind is one of the review APIs of authentication.k8s.io and
// authorization.k8s.io: created, answered, never stored, each by
// kube-apiserver's own REST code (k8s.io/kubernetes/pkg/registry/
// authentication and …/authorization), as kube-apiserver's
// pkg/registry/{authentication,authorization}/rest wire them.
type reviewKind struct {
	api.Resource
	// internal is a new object of the kind's internal type, what upstream's
	// REST takes and returns.
	internal func() runtime.Object
	// storage is the REST of the kind over s's authenticators and
	// authorizer.
	storage func(s *Server) rest.Creater
}

// reviewKinds are kube-apiserver's review APIs, in discovery's order
// (group, then plural).
var reviewKinds = []reviewKind{
	{review(authenticationv1.GroupName, "SelfSubjectReview", "selfsubjectreviews", false, func() any { return &authenticationv1.SelfSubjectReview{} }),
		func() runtime.Object { return &authenticationapi.SelfSubjectReview{} },
		func(*Server) rest.Creater { return selfsubjectreview.NewREST() }},
	{review(authenticationv1.GroupName, "TokenReview", "tokenreviews", false, func() any { return &authenticationv1.TokenReview{} }),
		func() runtime.Object { return &authenticationapi.TokenReview{} },
		func(s *Server) rest.Creater { return tokenreview.NewREST(s.tokenReviewAuthenticator(), s.apiAudiences) }},
	{review(authorizationv1.GroupName, "LocalSubjectAccessReview", "localsubjectaccessreviews", true, func() any { return &authorizationv1.LocalSubjectAccessReview{} }),
		func() runtime.Object { return &authorizationapi.LocalSubjectAccessReview{} },
		func(s *Server) rest.Creater {
			return localsubjectaccessreview.NewREST(s.accessAuthorizer(), upstream.Scheme())
		}},
	{review(authorizationv1.GroupName, "SelfSubjectAccessReview", "selfsubjectaccessreviews", false, func() any { return &authorizationv1.SelfSubjectAccessReview{} }),
		func() runtime.Object { return &authorizationapi.SelfSubjectAccessReview{} },
		func(s *Server) rest.Creater {
			return selfsubjectaccessreview.NewREST(s.accessAuthorizer(), upstream.Scheme())
		}},
	{review(authorizationv1.GroupName, "SelfSubjectRulesReview", "selfsubjectrulesreviews", false, func() any { return &authorizationv1.SelfSubjectRulesReview{} }),
		func() runtime.Object { return &authorizationapi.SelfSubjectRulesReview{} },
		func(s *Server) rest.Creater { return selfsubjectrulesreview.NewREST(s.ruleResolver()) }},
	{review(authorizationv1.GroupName, "SubjectAccessReview", "subjectaccessreviews", false, func() any { return &authorizationv1.SubjectAccessReview{} }),
		func() runtime.Object { return &authorizationapi.SubjectAccessReview{} },
		func(s *Server) rest.Creater {
			return subjectaccessreview.NewREST(s.accessAuthorizer(), upstream.Scheme())
		}},
}

func review(group, kind, plural string, namespaced bool, newObj func() any) api.Resource {
	return api.Resource{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Plural: plural,
		Singular: strings.ToLower(kind), Namespaced: namespaced, New: newObj}
}

// reviewDiscovery is what discovery announces of the reviews: create
// only, as kube-apiserver lists them (kubectl api-resources shows them).
// They stay out of the OpenAPI documents: there, kubectl create -f would
// validate them client side, which lists CustomResourceDefinitions
// dnsplane does not serve (docs/apiserver.md, "Reviews").
func reviewDiscovery() []discovery.Resource {
	out := make([]discovery.Resource, 0, len(reviewKinds))
	for _, k := range reviewKinds {
		out = append(out, discovery.Resource{Resource: k.Resource, Verbs: []string{"create"}})
	}
	return out
}

// withReviews is resources with the reviews, each before the first
// resource of a later group: discovery lists groups in the order they
// first appear, and the registry's is by name.
func withReviews(resources []discovery.Resource) []discovery.Resource {
	out := slices.Clone(resources)
	for _, r := range reviewDiscovery() {
		i := slices.IndexFunc(out, func(o discovery.Resource) bool { return o.GVK.Group > r.GVK.Group })
		if i < 0 {
			i = len(out)
		}
		out = slices.Insert(out, i, r)
	}
	return out
}

// servesReviewGroup reports whether group is one of the reviews' groups.
func servesReviewGroup(gv schema.GroupVersion) bool {
	for _, k := range reviewKinds {
		if k.GVK.GroupVersion() == gv || (gv.Version == "" && k.GVK.Group == gv.Group) {
			return true
		}
	}
	return false
}

// reviewFor returns the review kind path names, and the namespace of a
// namespaced one: /apis/<group>/v1/<plural>, or
// /apis/<group>/v1/namespaces/<ns>/<plural> for a namespaced kind.
func reviewFor(path string) (reviewKind, string, bool) {
	parts := splitPath(path)
	if len(parts) < 4 || parts[0] != "apis" {
		return reviewKind{}, "", false
	}
	gv := schema.GroupVersion{Group: parts[1], Version: parts[2]}
	var namespace string
	switch {
	case len(parts) == 4:
	case len(parts) == 6 && parts[3] == "namespaces" && parts[4] != "":
		namespace = parts[4]
	default:
		return reviewKind{}, "", false
	}
	plural := parts[len(parts)-1]
	for _, k := range reviewKinds {
		if k.GVK.GroupVersion() == gv && k.Plural == plural && k.Namespaced == (namespace != "") {
			return k, namespace, true
		}
	}
	return reviewKind{}, "", false
}

// serveReview answers the create of a review with kube-apiserver's own REST
// code for it: upstream's validation, the request's user (after
// impersonation), the server's authenticators, authorizer and rule
// resolver. Without an authorizer (tests), everything is allowed, as the
// server then allows it.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, k reviewKind, namespace string) {
	gr := schema.GroupResource{Group: k.GVK.Group, Resource: k.Plural}
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
	// JSON or protobuf, as client-go sends it; a review is not stored, so
	// client-go's (non-strict) decoding is upstream's.
	in, _ := k.New().(runtime.Object)
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, in)
	if err != nil {
		writeErrorNegotiated(w, r, s.log, apierrors.NewBadRequest(fmt.Sprintf("decoding the %s: %v", k.GVK.Kind, err)))
		return
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() && gvk != k.GVK {
		writeErrorNegotiated(w, r, s.log, apierrors.NewBadRequest(fmt.Sprintf("not a %s: %s", k.GVK.Kind, gvk)))
		return
	}
	internal := k.internal()
	if err := upstream.Convert(obj, internal); err != nil {
		writeErrorNegotiated(w, r, s.log, apierrors.NewBadRequest(err.Error()))
		return
	}
	// The user, namespace and request info upstream's REST reads from the
	// context (its declarative validation takes the version from it).
	ctx := request.WithUser(r.Context(), authz.UserInfo(u))
	ctx = request.WithNamespace(ctx, namespace)
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Path: r.URL.Path, Verb: "create",
		APIPrefix: "apis", APIGroup: gr.Group, APIVersion: k.GVK.Version, Namespace: namespace, Resource: gr.Resource})
	out, err := k.storage(s).Create(ctx, internal, nil, &metav1.CreateOptions{})
	if err != nil {
		writeErrorNegotiated(w, r, s.log, err)
		return
	}
	answer, _ := k.New().(runtime.Object)
	if err := upstream.Convert(out, answer); err != nil {
		writeErrorNegotiated(w, r, s.log, apierrors.NewInternalError(err))
		return
	}
	answer.GetObjectKind().SetGroupVersionKind(k.GVK)
	// Protobuf when the client asks for it first, as client-go's
	// protobuf clients do (kube-scheduler's and kube-controller-manager's
	// delegated authentication among them); JSON otherwise.
	protobuf := negotiateOutput(r.Header.Get("Accept"), true).protobuf
	if err := writeBody(w, http.StatusCreated, protobuf, answer); err != nil {
		writeErrorNegotiated(w, r, s.log, apierrors.NewInternalError(err))
	}
}

// accessAuthorizer is what the access reviews ask: the server's
// authorizer, or, without one, one that allows everything.
func (s *Server) accessAuthorizer() authorizer.Authorizer {
	if s.cfg.Authorizer != nil {
		return s.cfg.Authorizer
	}
	return authorizerfactory.NewAlwaysAllowAuthorizer()
}

// ruleResolver is what SelfSubjectRulesReview (kubectl auth can-i --list)
// lists: the rules of the authorizers --authorization-mode names
// (authz.Authorizer.RuleResolver), or, without an authorizer, AlwaysAllow's
// everything.
func (s *Server) ruleResolver() authorizer.RuleResolver {
	if s.cfg.RuleResolver != nil {
		return s.cfg.RuleResolver
	}
	return authorizerfactory.NewAlwaysAllowAuthorizer()
}

// tokenReviewAuthenticator is what a TokenReview asks about its token, as
// kube-apiserver hands tokenreview.NewREST its whole authenticator: the
// --token-auth-file tokens (audience-agnostic: they are good for the API
// server's audiences only, k8s.io/apiserver's WrapAudienceAgnosticRequest,
// as kube-apiserver wraps its static tokens), then the service account
// tokens, which check the review's audiences themselves; the user gets
// system:authenticated as every authenticated request does. Client
// certificates play no part: the review has a token only.
func (s *Server) tokenReviewAuthenticator() authenticator.Request {
	var reqs []authenticator.Request
	if s.cfg.Authenticator != nil {
		reqs = append(reqs, authenticator.WrapAudienceAgnosticRequest(s.apiAudiences, authn.Request(s.cfg.Authenticator)))
	}
	if s.saTokens != nil {
		reqs = append(reqs, bearertoken.New(s.saTokens))
	}
	return group.NewAuthenticatedGroupAdder(union.New(reqs...))
}
