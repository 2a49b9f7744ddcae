package authz

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// Filter passes the requests a allows to next and answers the others with
// kube-apiserver's 403 Status (responsewriters.ForbiddenStatusError:
// `secrets is forbidden: User "bob" cannot list resource "secrets" in API
// group "" in the namespace "kube-system"`), as its WithAuthorization
// filter does. An authorizer error without an allow is kube's plain-text
// 500. It must run after authentication and impersonation, which put the
// user in the context. writeError writes the 403 Status in the form the
// request asks for (the API server's own negotiation: JSON or protobuf).
//
// The filter is not upstream's WithAuthorization itself: that package
// (k8s.io/apiserver/pkg/endpoints/filters) brings the token cache, webhook
// authenticator and workqueue metrics, whose init replaces client-go's
// workqueue metrics provider in every dnsplane process.
func Filter(a authorizer.Authorizer, writeError ErrorWriter, log *slog.Logger, next http.Handler) http.Handler {
	attributer := NewAttributer()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := authn.UserFrom(r.Context())
		if !ok {
			responsewriters.InternalError(w, r, errNoUser)
			return
		}
		attrs, err := attributer.Attributes(r, u)
		if err != nil {
			responsewriters.InternalError(w, r, err)
			return
		}
		decision, reason, err := a.Authorize(r.Context(), attrs)
		if decision != authorizer.DecisionAllow {
			if err != nil {
				responsewriters.InternalError(w, r, err)
				return
			}
			log.DebugContext(r.Context(), "forbidden", "user", u.Name, "verb", attrs.Verb, "path", r.URL.Path, "reason", reason)
			writeError(w, r, responsewriters.ForbiddenStatusError(attrs, reason))
			return
		}
		if err := authorizeStreamCreate(r.Context(), a, attrs); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ErrorWriter writes an API error as the response to r.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// streamSubresources are the pod subresources a WebSocket client opens
// with a GET, which kube-apiserver also authorizes as "create"
// (AuthorizePodWebsocketUpgradeCreatePermission, on by default since
// 1.35; kubernetes/kubernetes#133515): otherwise a role granting only get
// on pods/exec would run commands.
var streamSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true}

// authorizeStreamCreate is that second check, with the error kube's pod
// registry returns (pkg/registry/core/pod/rest, ensureAuthorizedForVerb).
func authorizeStreamCreate(ctx context.Context, a authorizer.Authorizer, attrs *authorizer.AttributesRecord) *apierrors.StatusError {
	if !attrs.ResourceRequest || attrs.APIGroup != "" || attrs.Resource != "pods" ||
		!streamSubresources[attrs.Subresource] || attrs.Verb == "create" {
		return nil
	}
	create := *attrs
	create.Verb = "create"
	decision, reason, err := a.Authorize(ctx, &create)
	if err != nil && decision != authorizer.DecisionAllow {
		return apierrors.NewInternalError(err)
	}
	if decision != authorizer.DecisionAllow {
		return apierrors.NewForbidden(schema.GroupResource{Resource: attrs.Resource}, attrs.Name, errors.New(reason))
	}
	return nil
}

// Impersonation is what authn.Impersonation asks: may actor impersonate
// what r names, decided by a with verb "impersonate" as kube-apiserver's
// impersonation filter does.
func Impersonation(a authorizer.Authorizer) authn.ImpersonationAuthorizer {
	return func(ctx context.Context, actor authn.User, r authn.ImpersonationRequest) bool {
		decision, _, _ := a.Authorize(ctx, ImpersonationAttributes(actor, r))
		return decision == authorizer.DecisionAllow
	}
}
