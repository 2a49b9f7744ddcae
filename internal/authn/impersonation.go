package authn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The impersonation headers, as client-go sends them for kubectl --as,
// --as-group and --as-uid (and rest.Config.Impersonate).
const (
	HeaderImpersonateUser        = "Impersonate-User"
	HeaderImpersonateUID         = "Impersonate-Uid"
	HeaderImpersonateGroup       = "Impersonate-Group"
	HeaderImpersonateExtraPrefix = "Impersonate-Extra-"
)

// Service account user names and groups, as kube-apiserver forms them.
const (
	serviceAccountUserPrefix = "system:serviceaccount:"
	GroupServiceAccounts     = "system:serviceaccounts"
)

// ImpersonationRequest is one thing a request asks to act as; each is
// authorized on its own, as kube-apiserver checks the verb "impersonate" on
// each of users, groups, serviceaccounts, uids and userextras/<key>.
type ImpersonationRequest struct {
	// Resource is "users", "groups", "serviceaccounts" (core group), or
	// "uids" or "userextras" (group authentication.k8s.io).
	Resource string
	// Namespace is set for service accounts.
	Namespace string
	// Name is the user, group, service account, UID or extra value.
	Name string
	// ExtraKey is the key of a userextras request.
	ExtraKey string
}

func (r ImpersonationRequest) groupResource() schema.GroupResource {
	switch r.Resource {
	case "uids", "userextras":
		return schema.GroupResource{Group: "authentication.k8s.io", Resource: r.Resource}
	}
	return schema.GroupResource{Resource: r.Resource}
}

func (r ImpersonationRequest) String() string {
	switch {
	case r.Namespace != "":
		return fmt.Sprintf("%s %s/%s", r.Resource, r.Namespace, r.Name)
	case r.ExtraKey != "":
		return fmt.Sprintf("%s %s=%q", r.Resource, r.ExtraKey, r.Name)
	}
	return fmt.Sprintf("%s %q", r.Resource, r.Name)
}

// ImpersonationAuthorizer says whether actor may impersonate what r names.
type ImpersonationAuthorizer func(ctx context.Context, actor User, r ImpersonationRequest) bool

// AuthenticatedMayImpersonate lets every authenticated user impersonate
// anyone, and the anonymous user no one. It fits a server without
// authorization, where every authenticated user may already do everything,
// so acting as someone else grants nothing more; anonymous requests only
// reach public paths and must not gain an identity there.
func AuthenticatedMayImpersonate(_ context.Context, actor User, _ ImpersonationRequest) bool {
	return actor.Name != UserAnonymous && !slices.Contains(actor.Groups, GroupUnauthenticated)
}

// Impersonation makes requests carrying Impersonate-* headers act as the user
// they name, as kube-apiserver's impersonation filter does. It must run after
// Middleware, which attached the authenticated user it checks.
//
// The impersonated user gets the named groups (or, for a service account
// named without groups, its fixed ones), system:authenticated unless
// system:authenticated or system:unauthenticated is among them (impersonating
// system:anonymous adds system:unauthenticated instead), the UID and the
// extras. The headers are removed before next sees the request.
//
// Impersonate-Group, -Uid or -Extra-* without Impersonate-User is a 400 (kube
// answers a plain-text 500 for the same request). Anything authorize refuses
// is kube's 403, e.g. users "bob" is forbidden: User "system:anonymous"
// cannot impersonate resource "users" in API group "" at the cluster scope.
func Impersonation(authorize ImpersonationAuthorizer, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs, err := ParseImpersonation(r.Header)
		if err != nil {
			WriteStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		if len(reqs) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		actor, ok := UserFrom(r.Context())
		if !ok {
			// A wiring bug, not the client's fault: fail closed.
			WriteStatus(w, apierrors.NewInternalError(errors.New("no user found for request")))
			return
		}
		for _, req := range reqs {
			if !authorize(r.Context(), actor, req) {
				WriteStatus(w, apierrors.NewForbidden(req.groupResource(), req.Name, errors.New(forbiddenImpersonation(actor, req))))
				return
			}
		}
		target := impersonatedUser(reqs, len(r.Header.Values(HeaderImpersonateGroup)) > 0)
		log.DebugContext(r.Context(), "impersonating", "user", actor.Name, "as", target.Name, "groups", target.Groups, "path", r.URL.Path)
		r = r.WithContext(WithUser(r.Context(), target))
		// WithContext shares the header map with the caller's request.
		r.Header = r.Header.Clone()
		for name := range r.Header {
			if isImpersonationHeader(name) {
				delete(r.Header, name)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// forbiddenImpersonation is kube's authorization failure text for the verb
// impersonate on r.
func forbiddenImpersonation(actor User, r ImpersonationRequest) string {
	gr := r.groupResource()
	resource := gr.Resource
	if r.ExtraKey != "" {
		resource += "/" + r.ExtraKey
	}
	scope := "at the cluster scope"
	if r.Namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", r.Namespace)
	}
	return fmt.Sprintf("User %q cannot impersonate resource %q in API group %q %s", actor.Name, resource, gr.Group, scope)
}

// ParseImpersonation reads the Impersonate-* headers of a request, in kube's
// order: the user (a service account when it has the form
// system:serviceaccount:<namespace>:<name>), groups, extras (the key is the
// rest of the header name, lower-cased and %-unescaped, so keys can carry
// characters header names cannot), then the UID. None means no
// impersonation; groups, extras or a UID without a user are an error.
func ParseImpersonation(h http.Header) ([]ImpersonationRequest, error) {
	var reqs []ImpersonationRequest
	user := h.Get(HeaderImpersonateUser)
	if user != "" {
		if ns, name, ok := splitServiceAccount(user); ok {
			reqs = append(reqs, ImpersonationRequest{Resource: "serviceaccounts", Namespace: ns, Name: name})
		} else {
			reqs = append(reqs, ImpersonationRequest{Resource: "users", Name: user})
		}
	}
	for _, g := range h.Values(HeaderImpersonateGroup) {
		reqs = append(reqs, ImpersonationRequest{Resource: "groups", Name: g})
	}
	// Header maps are unordered; sort so the result (and which request a
	// 403 names) does not depend on map iteration.
	var extraHeaders []string
	for name := range h {
		if hasPrefixFold(name, HeaderImpersonateExtraPrefix) {
			extraHeaders = append(extraHeaders, name)
		}
	}
	sort.Strings(extraHeaders)
	for _, name := range extraHeaders {
		key := unescapeExtraKey(strings.ToLower(name[len(HeaderImpersonateExtraPrefix):]))
		for _, v := range h[name] {
			reqs = append(reqs, ImpersonationRequest{Resource: "userextras", Name: v, ExtraKey: key})
		}
	}
	if uid := h.Get(HeaderImpersonateUID); uid != "" {
		reqs = append(reqs, ImpersonationRequest{Resource: "uids", Name: uid})
	}
	if user == "" && len(reqs) > 0 {
		names := make([]string, len(reqs))
		for i, r := range reqs {
			names[i] = r.String()
		}
		return nil, fmt.Errorf("requested [%s] without impersonating a user: %s needs %s",
			strings.Join(names, ", "), headerFor(reqs[0]), HeaderImpersonateUser)
	}
	return reqs, nil
}

func headerFor(r ImpersonationRequest) string {
	switch r.Resource {
	case "groups":
		return HeaderImpersonateGroup
	case "uids":
		return HeaderImpersonateUID
	}
	return HeaderImpersonateExtraPrefix + "*"
}

// impersonatedUser builds the user reqs (already authorized) describe.
func impersonatedUser(reqs []ImpersonationRequest, groupsSpecified bool) User {
	var u User
	groups := []string{}
	for _, r := range reqs {
		switch r.Resource {
		case "users":
			u.Name = r.Name
		case "serviceaccounts":
			u.Name = serviceAccountUserPrefix + r.Namespace + ":" + r.Name
			if !groupsSpecified {
				// A service account's groups are fixed; the named groups
				// replace them when given.
				groups = append(groups, GroupServiceAccounts, GroupServiceAccounts+":"+r.Namespace)
			}
		case "groups":
			groups = append(groups, r.Name)
		case "userextras":
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[r.ExtraKey] = append(u.Extra[r.ExtraKey], r.Name)
		case "uids":
			u.UID = r.Name
		}
	}
	if u.Name == UserAnonymous {
		if !slices.Contains(groups, GroupUnauthenticated) {
			groups = append(groups, GroupUnauthenticated)
		}
	} else if !slices.Contains(groups, GroupAuthenticated) && !slices.Contains(groups, GroupUnauthenticated) {
		groups = append(groups, GroupAuthenticated)
	}
	u.Groups = groups
	return u
}

// splitServiceAccount splits system:serviceaccount:<namespace>:<name> with a
// valid namespace and name, as kube decides whether a user is a service
// account; anything else is an ordinary user name.
func splitServiceAccount(user string) (ns, name string, ok bool) {
	rest, found := strings.CutPrefix(user, serviceAccountUserPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 {
		return "", "", false
	}
	if len(apimachineryvalidation.ValidateNamespaceName(parts[0], false)) != 0 ||
		len(apimachineryvalidation.ValidateServiceAccountName(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// unescapeExtraKey undoes the %-encoding client-go applies to extra keys; a
// key that does not unescape is kept as sent, as kube does.
func unescapeExtraKey(key string) string {
	if k, err := url.PathUnescape(key); err == nil {
		return k
	}
	return key
}

func isImpersonationHeader(name string) bool {
	return strings.EqualFold(name, HeaderImpersonateUser) || strings.EqualFold(name, HeaderImpersonateUID) ||
		strings.EqualFold(name, HeaderImpersonateGroup) || hasPrefixFold(name, HeaderImpersonateExtraPrefix)
}

// hasPrefixFold is strings.HasPrefix ignoring case: net/http canonicalizes
// header names, except names with characters outside the token set, which it
// keeps as sent.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// WriteStatus writes err as the metav1.Status kube-apiserver would send.
func WriteStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	body, mErr := json.Marshal(st)
	if mErr != nil {
		// A Status always marshals; keep the status code regardless.
		body = []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(append(body, '\n'))
}
