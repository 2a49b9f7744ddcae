package controlplane

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/controlplane/controller/clusterauthenticationtrust"
	"k8s.io/kubernetes/pkg/controlplane/controller/legacytokentracking"
	"k8s.io/kubernetes/pkg/controlplane/controller/systemnamespaces"
)

// apiServerControllers are controllers kube-apiserver runs inside itself
// (pkg/controlplane/controller), k8s.io/kubernetes used as a library and
// run here against this API server with the admin credentials:
//
//   - cluster authentication trust: the ConfigMap
//     kube-system/extension-apiserver-authentication with client-ca-file,
//     the CA client certificates are checked against. Delegated
//     authentication (kube-controller-manager's and kube-scheduler's secure
//     ports, aggregated API servers) reads it. dnsplane takes no
//     front-proxy headers, so there are no requestheader-* keys, as
//     kube-apiserver writes none without --requestheader-client-ca-file.
//   - legacy token tracking: kube-system/kube-apiserver-legacy-service-account-token-tracking,
//     the date from which legacy token use is tracked, which
//     kube-controller-manager's legacy token cleaner reads.
//   - system namespaces: the namespaces of the bootstrap, created again
//     within a minute when deleted.
//
// The bootstrap (bootstrap.go) creates the namespaces before the API
// server serves; these keep what they own as kube-apiserver does.
type apiServerControllers struct {
	loopback   *rest.Config
	clientCA   []byte // PEM
	namespaces []string
}

func (c *apiServerControllers) Name() string { return "apiserver-controllers" }

// Run runs the controllers until ctx ends.
func (c *apiServerControllers) Run(ctx context.Context) error {
	client, err := loopbackClient(c.loopback)
	if err != nil {
		return err
	}
	ca, err := dynamiccertificates.NewStaticCAContent("client-ca", c.clientCA)
	if err != nil {
		return fmt.Errorf("client CA: %w", err)
	}
	trust := clusterauthenticationtrust.NewClusterAuthenticationTrustController(clusterauthenticationtrust.ClusterAuthenticationInfo{ClientCA: ca}, client)
	tokens := legacytokentracking.NewController(client)
	// kube-apiserver's own resync of the namespace informer.
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	nsController := systemnamespaces.NewController(c.namespaces, client, factory.Core().V1().Namespaces())
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	done := make(chan struct{}, 3)
	go func() { trust.Run(ctx, 1); done <- struct{}{} }()
	go func() { tokens.RunWithContext(ctx); done <- struct{}{} }()
	go func() { nsController.Run(ctx.Done()); done <- struct{}{} }()
	<-ctx.Done()
	for range 3 {
		<-done
	}
	return nil
}

// loopbackClient is the API server's client of itself, for the
// controllers kube-apiserver runs in its own process.
func loopbackClient(loopback *rest.Config) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(loopback)
	cfg.UserAgent = "dnsplane-apiserver-controllers"
	// The v1 Endpoints deprecation Warning would be logged on every
	// reconcile: these clients are the server talking to itself.
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("loopback client: %w", err)
	}
	return client, nil
}
