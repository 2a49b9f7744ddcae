package authz

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// BenchmarkFilter is what authorization adds to a request (a list of
// Secrets), without the rest of it: Filter with Node,RBAC over upstream's bootstrap
// policy (about 200 roles and bindings), for the admin (system:masters,
// decided first), a user a RoleBinding allows (RBAC walks the
// ClusterRoleBindings, then the namespace's RoleBindings) and a user
// nothing allows (every binding walked, then the 403 written).
func BenchmarkFilter(b *testing.B) {
	a := started(b, DefaultModes())
	h := Filter(a, writeStatus, slog.New(slog.DiscardHandler), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, bc := range []struct {
		name string
		user authn.User
	}{{"admin", admin}, {"rolebinding", dave}, {"forbidden", bob}} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/api/v1/namespaces/team/secrets", nil)
			r = r.WithContext(authn.WithUser(r.Context(), bc.user))
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
