package controlplane

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// loopbackUser is who the API server's clients of itself are, as
// kube-apiserver names its loopback identity (system:apiserver in
// system:masters: k8s.io/apiserver/pkg/server/options.SecureServingOptionsWithLoopback).
var loopbackUser = authn.User{Name: "system:apiserver", Groups: []string{"system:masters"}}

// loopback is the API server's credential for its own clients (the
// namespace and trust controllers, the kubernetes Service's endpoints,
// the authorizers' informers): a random token that lives only in this
// process, as kube-apiserver's, so that they do not depend on the user's
// admin kubeconfig (which the user may edit or point elsewhere).
type loopback struct {
	token string
	user  authn.User
}

func newLoopback() (*loopback, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("loopback token: %w", err)
	}
	u := loopbackUser
	u.UID = rand.Text()
	return &loopback{token: base64.RawURLEncoding.EncodeToString(b), user: u}, nil
}

// Authenticate implements authn.Authenticator for the loopback token only.
func (l *loopback) Authenticate(r *http.Request) (authn.User, bool, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || subtle.ConstantTimeCompare([]byte(token), []byte(l.token)) != 1 {
		return authn.User{}, false, nil
	}
	return l.user, true, nil
}

// config is a client config of serverURL with the loopback token,
// trusting caPEM.
func (l *loopback) config(serverURL string, caPEM []byte) *rest.Config {
	return &rest.Config{Host: serverURL, BearerToken: l.token, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
}
