package apiserver

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	corelisters "k8s.io/client-go/listers/core/v1"
	satoken "k8s.io/kubernetes/pkg/serviceaccount"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/core/serviceaccount"
)

// Service account tokens: kube-apiserver's --service-account-issuer,
// --service-account-signing-key-file and the JWT authenticator that
// accepts what it signs, with upstream's k8s.io/kubernetes/pkg/serviceaccount
// on both sides. docs/apiserver.md, "Service account tokens".

// serviceAccountTokens returns the issuer of serviceaccounts/token and the
// authenticator of its tokens, which checks the service account and the
// bound object still exist through s; (nil, nil) when cfg has no key.
func serviceAccountTokens(cfg Config, s *Server) (*serviceaccount.Tokens, authenticator.Token, error) {
	if cfg.ServiceAccountKey == nil {
		return nil, nil, nil
	}
	if cfg.ServiceAccountIssuer == "" {
		return nil, nil, fmt.Errorf("apiserver: a service account key needs an issuer")
	}
	gen, err := satoken.JWTTokenGenerator(cfg.ServiceAccountIssuer, cfg.ServiceAccountKey)
	if err != nil {
		return nil, nil, fmt.Errorf("service account token signer: %w", err)
	}
	keys, err := satoken.StaticPublicKeysGetter([]any{cfg.ServiceAccountKey.Public()})
	if err != nil {
		return nil, nil, fmt.Errorf("service account token keys: %w", err)
	}
	// kube-apiserver's --api-audiences default to the issuer.
	auds := []string{cfg.ServiceAccountIssuer}
	tokens := &serviceaccount.Tokens{Generator: gen, Audiences: auds, Now: cfg.Now}
	a := satoken.JWTTokenAuthenticator([]string{cfg.ServiceAccountIssuer}, keys, authenticator.Audiences(auds), satoken.NewValidator(newTokenObjects(cfg, s)))
	return tokens, a, nil
}

// tokenObjects is what the token authenticator reads to tell that a
// token's service account and bound object still exist
// (satoken.ServiceAccountTokenGetter). As kube-apiserver's getter
// (k8s.io/kubernetes/pkg/controller/serviceaccount.NewGetterFromClient), it
// reads the informers first and storage only on a miss, so a request with a
// service account token costs no storage read. That getter itself is not
// used: it needs listers of Secrets (a second copy of every Secret, for
// tokens bound to one, which are rare) and of webhook configurations, which
// dnsplane does not serve; those are read from storage.
type tokenObjects struct {
	objs objects
	// nil without Config.Informers: everything is read from storage.
	serviceAccounts corelisters.ServiceAccountLister
	pods            corelisters.PodLister
	nodes           corelisters.NodeLister
}

func newTokenObjects(cfg Config, s *Server) tokenObjects {
	t := tokenObjects{objs: objects{s}}
	if cfg.Informers != nil {
		core := cfg.Informers.Core().V1()
		t.serviceAccounts, t.pods, t.nodes = core.ServiceAccounts().Lister(), core.Pods().Lister(), core.Nodes().Lister()
	}
	return t
}

func coreResource(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: resource}
}

func (g tokenObjects) GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	if g.serviceAccounts != nil {
		if sa, err := g.serviceAccounts.ServiceAccounts(namespace).Get(name); err == nil {
			return sa, nil
		}
	}
	obj, err := g.objs.Get(ctx, coreResource("serviceaccounts"), namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

func (g tokenObjects) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if g.pods != nil {
		if p, err := g.pods.Pods(namespace).Get(name); err == nil {
			return p, nil
		}
	}
	obj, err := g.objs.Get(ctx, coreResource("pods"), namespace, name)
	if err != nil {
		return nil, err
	}
	p := obj.(*dpcorev1.Pod)
	return &corev1.Pod{ObjectMeta: p.ObjectMeta, Spec: p.Spec.PodSpec, Status: p.Status}, nil
}

func (g tokenObjects) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := g.objs.Get(ctx, coreResource("secrets"), namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

func (g tokenObjects) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	if g.nodes != nil {
		if n, err := g.nodes.Get(name); err == nil {
			return n, nil
		}
	}
	obj, err := g.objs.Get(ctx, coreResource("nodes"), "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}

// dnsplane serves no admission webhook configurations, so no token is
// bound to one.
func (tokenObjects) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(admissionregistrationv1.Resource("validatingwebhookconfigurations"), name)
}

func (tokenObjects) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(admissionregistrationv1.Resource("mutatingwebhookconfigurations"), name)
}
