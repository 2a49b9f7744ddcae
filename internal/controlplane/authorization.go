package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/apiserver"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/operator/clusterdnspolicy"
	"github.com/dnsplane/dnsplane/internal/operator/operatorpolicy"
)

// policyTimeout bounds the bootstrap policy's reconciliation and the
// authorizers' first sync, as kube-apiserver's rbac/bootstrap-roles hook
// gives up after 30s.
const policyTimeout = 30 * time.Second

// authorization is the API server's authorizer (--authorization-mode) and
// the informers of its own loopback client it reads, kube-apiserver's
// VersionedInformerFactory, which admission and the token authenticator
// read too (apiserver.Config.Informers): the authorizer is built before the
// API server and the informers start once it serves.
type authorization struct {
	authorizer *authz.Authorizer
	client     kubernetes.Interface
	factory    informers.SharedInformerFactory
	// pods feeds the factory's pod informer from the API server in
	// process; attached once the server is built.
	pods *apiserver.PodSource
}

func newAuthorization(modes []string, loopback *rest.Config) (*authorization, error) {
	cfg := rest.CopyConfig(loopback)
	cfg.UserAgent = "dnsplane-apiserver-authorization"
	cfg.WarningHandler = rest.NoWarnings{}
	// The server's client of itself: its own limits apply, not client-go's
	// 5 requests/s, which would make the policy's first reconciliation
	// (a few hundred requests) last a minute.
	cfg.QPS = -1
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("authorization's loopback client: %w", err)
	}
	// kube-apiserver's resync of its versioned informers. Their readers
	// (the authorizers, admission, the token authenticator) never read
	// managed fields, so the cached copies go without them: a pod's are a
	// tenth of its size or more, and the pod informer holds every pod.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 10*time.Minute, informers.WithTransform(stripManagedFields))
	pods := &apiserver.PodSource{}
	pods.Register(factory)
	a, err := authz.New(modes, factory)
	if err != nil {
		return nil, err
	}
	return &authorization{authorizer: a, client: client, factory: factory, pods: pods}, nil
}

func (a *authorization) Name() string { return "authorizer-informers" }

// Run feeds the authorizers until ctx ends.
func (a *authorization) Run(ctx context.Context) error {
	a.factory.Start(ctx.Done())
	<-ctx.Done()
	a.factory.Shutdown()
	return nil
}

// ready reconciles upstream's bootstrap policy, as kube-apiserver's
// rbac/bootstrap-roles post-start hook does whatever the modes (the objects
// are there when RBAC is turned on later), and then waits until the
// authorizers have read it: before, RBAC would refuse every user but
// system:masters, the anonymous /healthz included.
func (a *authorization) ready(ctx context.Context, log *slog.Logger) error {
	start := time.Now()
	if err := authz.EnsurePolicy(ctx, a.client, policy(), policyTimeout, log); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, policyTimeout, true, func(context.Context) (bool, error) {
		return a.authorizer.HasSynced(), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the authorizers' informers: %w", err)
	}
	log.Debug("authorization ready", "took", time.Since(start))
	return nil
}

// policy is upstream's bootstrap policy, the DNS operator's roles
// (internal/operator/operatorpolicy) and the cluster DNS's
// (internal/operator/clusterdnspolicy), reconciled alike at every start:
// `up` runs each as its own user, and `dnsplane operator` may run against
// any dnsplane API server with that user's credentials.
func policy() authz.Policy {
	p := authz.BootstrapPolicy()
	for _, rbac := range []func() (rbacv1.ClusterRole, rbacv1.ClusterRoleBinding, rbacv1.Role, rbacv1.RoleBinding){operatorpolicy.RBAC, clusterdnspolicy.RBAC} {
		cr, crb, role, rb := rbac()
		p.ClusterRoles = append(p.ClusterRoles, cr)
		p.ClusterRoleBindings = append(p.ClusterRoleBindings, crb)
		p.Roles[role.Namespace] = append(p.Roles[role.Namespace], role)
		p.RoleBindings[rb.Namespace] = append(p.RoleBindings[rb.Namespace], rb)
	}
	return p
}

// stripManagedFields drops an object's managed fields before its informer
// stores it (cache.TransformFunc: the object is the informer's own, freshly
// decoded). Tombstones and objects without metadata pass unchanged.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
