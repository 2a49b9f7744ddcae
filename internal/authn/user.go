// Package authn decides who sent an API request, following the rules
// kube-apiserver applies to static bearer tokens and client certificates, so
// that kubectl and client-go see the same behaviour as against a real cluster.
package authn

import (
	"context"
	"net/http"
)

// Well-known identities that kube-apiserver attaches to requests; RBAC rules
// and kubectl auth whoami refer to them by these exact names.
const (
	GroupAuthenticated   = "system:authenticated"
	GroupUnauthenticated = "system:unauthenticated"
	UserAnonymous        = "system:anonymous"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is what authenticators (and Impersonate-Extra-* headers) attach
	// beyond name, UID and groups, e.g. scopes; nil when none.
	Extra map[string][]string
}

// Authenticator decides who sent a request. ok=false with a nil error means
// the request carried no credentials of this authenticator's kind; a non-nil
// error means it carried credentials that were rejected.
type Authenticator interface {
	Authenticate(r *http.Request) (User, bool, error)
}

// userKey is unexported so only this package can place a User in a context;
// handlers can then trust whatever UserFrom returns.
type userKey struct{}

// WithUser returns a copy of ctx carrying u. Exported for handlers' tests and
// for in-process callers that act on behalf of a known user.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user the Middleware attached to the request context.
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}
