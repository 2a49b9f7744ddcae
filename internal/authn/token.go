package authn

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// Token authenticates the bearer token of a request with a
// k8s.io/apiserver token authenticator (service account JWTs,
// k8s.io/kubernetes/pkg/serviceaccount), as kube-apiserver's bearertoken
// request authenticator wraps its token authenticators.
func Token(a authenticator.Token) Authenticator { return tokenAuth{a} }

type tokenAuth struct{ a authenticator.Token }

func (t tokenAuth) Authenticate(r *http.Request) (User, bool, error) {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return User{}, false, nil
	}
	resp, ok, err := t.a.AuthenticateToken(r.Context(), token)
	if err != nil || !ok {
		return User{}, false, err
	}
	info := resp.User
	u := User{Name: info.GetName(), UID: info.GetUID(), Groups: info.GetGroups()}
	if extra := info.GetExtra(); len(extra) > 0 {
		u.Extra = extra
	}
	return u, true, nil
}
