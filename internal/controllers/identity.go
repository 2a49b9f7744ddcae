package controllers

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/approver"
	"k8s.io/kubernetes/pkg/controller/certificates/cleaner"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/certificates/signer"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
	serviceaccountcontroller "k8s.io/kubernetes/pkg/controller/serviceaccount"
	"k8s.io/utils/clock"
)

// identityDescriptors are the controllers of credentials and roles.
func identityDescriptors() []Descriptor {
	return []Descriptor{
		{Name: "serviceaccount-controller", Why: "creates the default ServiceAccount in every namespace, which pods get when they name none", New: newServiceAccountController},
		{Name: "root-ca-certificate-publisher-controller", Why: "writes the kube-root-ca.crt ConfigMap (the API server's CA) into every namespace", New: newRootCAPublisher},
		{Name: "legacy-serviceaccount-token-cleaner-controller", Why: "deletes unused legacy service account token Secrets after a year, as kube does", New: newLegacyTokenCleaner},
		{Name: "certificatesigningrequest-signing-controller", Why: "signs approved CertificateSigningRequests of the kubernetes.io signers with the cluster CA (--cluster-signing-cert-file)", New: newCSRSigningController},
		{Name: "certificatesigningrequest-approving-controller", Why: "approves kubelets' client certificate requests their authors may make (a SubjectAccessReview of certificatesigningrequests/nodeclient or selfnodeclient), as kube does once those roles are bound", New: newCSRApprovingController},
		{Name: "certificatesigningrequest-cleaner-controller", Why: "deletes old and expired CertificateSigningRequests", New: newCSRCleanerController},
		{Name: "clusterrole-aggregation-controller", Why: "fills aggregated ClusterRoles' rules from the roles their aggregationRule selects", New: newClusterRoleAggregation},
	}
}

func newServiceAccountController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("service-account-controller")
	if err != nil {
		return nil, err
	}
	sac, err := serviceaccountcontroller.NewServiceAccountsController(klog.FromContext(ctx), c.Informers.Core().V1().ServiceAccounts(),
		c.Informers.Core().V1().Namespaces(), client, serviceaccountcontroller.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return nil, fmt.Errorf("service account controller: %w", err)
	}
	return func(ctx context.Context) { sac.Run(ctx, 1) }, nil
}

func newRootCAPublisher(_ context.Context, c *Context) (func(context.Context), error) {
	if len(c.RootCA) == 0 {
		// kube-controller-manager refuses to start without one; with no CA
		// in the kubeconfig there is nothing true to publish.
		return nil, nil
	}
	client, err := c.NewClient("root-ca-cert-publisher")
	if err != nil {
		return nil, err
	}
	p, err := rootcacertpublisher.NewPublisher(c.Informers.Core().V1().ConfigMaps(), c.Informers.Core().V1().Namespaces(), client, c.RootCA)
	if err != nil {
		return nil, fmt.Errorf("root CA publisher: %w", err)
	}
	return func(ctx context.Context) { p.Run(ctx, 1) }, nil
}

func newLegacyTokenCleaner(_ context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("legacy-service-account-token-cleaner")
	if err != nil {
		return nil, err
	}
	lc, err := serviceaccountcontroller.NewLegacySATokenCleaner(c.Informers.Core().V1().ServiceAccounts(), c.Informers.Core().V1().Secrets(),
		c.Informers.Core().V1().Pods(), client, clock.RealClock{}, serviceaccountcontroller.LegacySATokenCleanerOptions{
			CleanUpPeriod: c.ComponentConfig.LegacySATokenCleaner.CleanUpPeriod.Duration,
			SyncInterval:  serviceaccountcontroller.DefaultCleanerSyncInterval,
		})
	if err != nil {
		return nil, fmt.Errorf("legacy service account token cleaner: %w", err)
	}
	return lc.Run, nil
}

// newCSRSigningController runs kube-controller-manager's four signers with
// the one cluster CA, as --cluster-signing-cert-file does; without it
// there is nothing to sign with and, as upstream, nothing runs.
func newCSRSigningController(ctx context.Context, c *Context) (func(context.Context), error) {
	cfg := c.ComponentConfig.CSRSigningController
	if cfg.ClusterSigningCertFile == "" || cfg.ClusterSigningKeyFile == "" {
		return nil, nil
	}
	client, err := c.NewClient("certificate-controller")
	if err != nil {
		return nil, err
	}
	csrs := c.Informers.Certificates().V1().CertificateSigningRequests()
	ttl := cfg.ClusterSigningDuration.Duration
	cert, key := cfg.ClusterSigningCertFile, cfg.ClusterSigningKeyFile
	var signers []*signer.CSRSigningController
	for _, build := range []func() (*signer.CSRSigningController, error){
		func() (*signer.CSRSigningController, error) {
			return signer.NewKubeletServingCSRSigningController(ctx, client, csrs, cert, key, ttl)
		},
		func() (*signer.CSRSigningController, error) {
			return signer.NewKubeletClientCSRSigningController(ctx, client, csrs, cert, key, ttl)
		},
		func() (*signer.CSRSigningController, error) {
			return signer.NewKubeAPIServerClientCSRSigningController(ctx, client, csrs, cert, key, ttl)
		},
		func() (*signer.CSRSigningController, error) {
			return signer.NewLegacyUnknownCSRSigningController(ctx, client, csrs, cert, key, ttl)
		},
	} {
		s, err := build()
		if err != nil {
			return nil, fmt.Errorf("CSR signer: %w", err)
		}
		signers = append(signers, s)
	}
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		for _, s := range signers {
			wg.Go(func() { s.Run(ctx, 5) })
		}
		wg.Wait()
	}, nil
}

// newCSRApprovingController is kube's, approving with the same 5 workers.
// It approves nothing until a binding grants the create it asks about
// (kubeadm binds system:certificates.k8s.io:certificatesigningrequests:selfnodeclient
// to system:nodes); the signing controller then issues.
func newCSRApprovingController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("certificate-controller")
	if err != nil {
		return nil, err
	}
	ac := approver.NewCSRApprovingController(ctx, client, c.Informers.Certificates().V1().CertificateSigningRequests())
	return func(ctx context.Context) { ac.Run(ctx, 5) }, nil
}

func newCSRCleanerController(_ context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("certificate-controller")
	if err != nil {
		return nil, err
	}
	cc := cleaner.NewCSRCleanerController(client.CertificatesV1().CertificateSigningRequests(), c.Informers.Certificates().V1().CertificateSigningRequests())
	return func(ctx context.Context) { cc.Run(ctx, 1) }, nil
}

func newClusterRoleAggregation(_ context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("clusterrole-aggregation-controller")
	if err != nil {
		return nil, err
	}
	ca := clusterroleaggregation.NewClusterRoleAggregation(c.Informers.Rbac().V1().ClusterRoles(), client.RbacV1())
	return func(ctx context.Context) { ca.Run(ctx, 5) }, nil
}
