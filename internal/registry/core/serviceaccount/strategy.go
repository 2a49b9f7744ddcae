// Package serviceaccount is the strategy of core/v1 ServiceAccounts
// (upstream's validation, pkg/registry/core/serviceaccount/strategy.go) and
// their token subresource: signed, bound service account tokens as
// kube-apiserver's TokenREST issues them
// (pkg/registry/core/serviceaccount/storage/token.go).
// docs/apiserver.md, "Service account tokens".
package serviceaccount

import (
	"time"

	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Tokens is how an API server issues service account tokens.
type Tokens struct {
	// Generator signs tokens (serviceaccount.JWTTokenGenerator with the
	// issuer and the service account signing key).
	Generator serviceaccount.TokenGenerator
	// Audiences are the API server's own (--api-audiences, which default
	// to the issuer), given to a TokenRequest that names none.
	Audiences []string
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Strategy is the ServiceAccount strategy.
type Strategy struct {
	upstream.Strategy[core.ServiceAccount]
	tokens *Tokens
}

var _ rest.Strategy = Strategy{}

// New returns the ServiceAccount strategy; tokens nil serves no
// serviceaccounts/token (offline validation, or a server without a
// signing key).
func New(tokens *Tokens) Strategy {
	return Strategy{Strategy: upstream.Strategy[core.ServiceAccount]{
		// An immediate delete answers with the object, as kube's
		// ServiceAccount store (ReturnDeletedObject).
		Default: rest.Default{Namespaced: true, ReturnDeletedObject: true},
		Rules: upstream.Rules[core.ServiceAccount]{Validate: corevalidation.ValidateServiceAccount,
			ValidateUpdate: corevalidation.ValidateServiceAccountUpdate},
	}, tokens: tokens}
}

// Subresources is serviceaccounts/token when the server issues tokens.
func (s Strategy) Subresources() []rest.Subresource {
	if s.tokens == nil || s.tokens.Generator == nil {
		return nil
	}
	return []rest.Subresource{token(*s.tokens)}
}
