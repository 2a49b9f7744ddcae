package authn

import (
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
)

// Middleware authenticates every request before it reaches next.
//
// Authenticated requests get the user in their context (see UserFrom), with
// the group system:authenticated added, and lose their Authorization header so
// no handler is tempted to reuse the token: both as kube-apiserver does.
//
// Requests without credentials for a path in public get the anonymous user
// (system:anonymous in system:unauthenticated), which is what kube's
// system:public-info-viewer role lets through. An entry ending in "*" matches
// every path with that prefix, like an RBAC nonResourceURL. Everything else,
// including public paths with credentials that were rejected, gets 401.
//
// Rejected credentials are logged to slog's default logger at warning level,
// without the credential, as kube logs them.
func Middleware(a Authenticator, public []string, next http.Handler) http.Handler {
	return middleware(a, public, next, slog.Default())
}

func middleware(a Authenticator, public []string, next http.Handler, log *slog.Logger) http.Handler {
	pub := newPathSet(public)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := a.Authenticate(r)
		switch {
		case ok:
			r = r.WithContext(WithUser(r.Context(), withAuthenticatedGroup(u)))
			if _, has := r.Header["Authorization"]; has {
				// WithContext shares the header map with the caller's request;
				// clone it before dropping the credential.
				r.Header = r.Header.Clone()
				r.Header.Del("Authorization")
			}
			next.ServeHTTP(w, r)
		case err == nil && pub.match(r.URL.Path):
			anon := User{Name: UserAnonymous, Groups: []string{GroupUnauthenticated}}
			next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), anon)))
		default:
			if err != nil {
				// The errors never contain the credential itself.
				log.WarnContext(r.Context(), "unable to authenticate the request",
					"err", err, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			}
			writeUnauthorized(w, r)
		}
	})
}

// withAuthenticatedGroup mirrors kube's AuthenticatedGroupAdder: every
// authenticated user is in system:authenticated unless it already names one
// of the two catch-all groups.
func withAuthenticatedGroup(u User) User {
	if slices.Contains(u.Groups, GroupAuthenticated) || slices.Contains(u.Groups, GroupUnauthenticated) {
		return u
	}
	u.Groups = append(slices.Clip(u.Groups), GroupAuthenticated)
	return u
}

// unauthorizedBody is the metav1.Status kube-apiserver sends for a failed
// authentication, byte for byte as its JSON serializer writes it (a
// json.Encoder, hence the trailing newline). client-go and kubectl turn it
// into "You must be logged in to the server (Unauthorized)". A test checks it
// against apierrors.NewUnauthorized.
const unauthorizedBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

func writeUnauthorized(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// kube closes HTTP/2 connections after an unauthenticated request so a
	// client without credentials cannot hold a multiplexed connection open
	// (CVE-2023-44487 mitigation); net/http sends GOAWAY on this header.
	if r.ProtoMajor == 2 {
		h.Set("Connection", "close")
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = io.WriteString(w, unauthorizedBody)
}

type pathSet struct {
	exact    map[string]bool
	prefixes []string
}

func newPathSet(paths []string) pathSet {
	s := pathSet{exact: make(map[string]bool, len(paths))}
	for _, p := range paths {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			s.prefixes = append(s.prefixes, prefix)
		} else {
			s.exact[p] = true
		}
	}
	return s
}

func (s pathSet) match(path string) bool {
	if s.exact[path] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
