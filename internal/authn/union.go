package authn

import (
	"errors"
	"net/http"
)

type union []Authenticator

// Union tries each authenticator in order and returns the first success.
// Errors from authenticators that rejected their credentials are collected
// and returned only when none succeeds, as kube's union authenticator does, so
// a valid client certificate wins over a stale token sent alongside it.
// Nil authenticators are skipped so optional ones can be passed directly.
func Union(a ...Authenticator) Authenticator {
	u := make(union, 0, len(a))
	for _, x := range a {
		if x != nil {
			u = append(u, x)
		}
	}
	return u
}

func (u union) Authenticate(r *http.Request) (User, bool, error) {
	var errs []error
	for _, a := range u {
		user, ok, err := a.Authenticate(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return User{}, false, errors.Join(errs...)
}
