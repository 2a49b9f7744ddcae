package authn

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Request is a as k8s.io/apiserver's request authenticator, for upstream
// code that takes one: the TokenReview REST
// (k8s.io/kubernetes/pkg/registry/authentication/tokenreview) authenticates
// the reviewed token with the server's authenticators through it. The user
// is a's as it is: the caller adds system:authenticated
// (k8s.io/apiserver/pkg/authentication/group), as kube-apiserver wraps its
// union of authenticators.
func Request(a Authenticator) authenticator.Request { return requestAuth{a} }

type requestAuth struct{ a Authenticator }

func (r requestAuth) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	u, ok, err := r.a.Authenticate(req)
	if err != nil || !ok {
		return nil, false, err
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}}, true, nil
}
