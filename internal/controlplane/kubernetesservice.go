package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/controlplane/controller/kubernetesservice"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
)

// kube-apiserver's defaults: --endpoint-reconciler-type=lease reconciles
// every 10 s with leases of 15 s (pkg/controlplane, DefaultEndpointReconcilerInterval
// and DefaultEndpointReconcilerTTL).
const (
	endpointInterval = 10 * time.Second
	endpointLeaseTTL = 15 * time.Second
)

// kubernetesEndpoints keeps the kubernetes Service's Endpoints and
// EndpointSlice (default/kubernetes) at the addresses of the API servers
// that share this etcd, with kube-apiserver's own kubernetesservice
// controller and lease endpoint reconciler (pkg/controlplane/reconcilers)
// as libraries: each API server renews a lease on its address and writes
// the addresses whose lease holds; a clean stop removes its own at once,
// a crashed one drops out when its lease expires.
type kubernetesEndpoints struct {
	kubeconfig string
	etcd       *clientv3.Client
	etcdPrefix string
	advertise  net.IP
	serviceIP  net.IP
	port       int
	log        *slog.Logger
}

func (k *kubernetesEndpoints) Name() string { return "kubernetes-service-endpoints" }

// Run reconciles until ctx ends, then removes this API server's address.
func (k *kubernetesEndpoints) Run(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", k.kubeconfig)
	if err != nil {
		return fmt.Errorf("loopback client: %w", err)
	}
	cfg.UserAgent = "dnsplane-apiserver-controllers"
	// The v1 Endpoints deprecation Warning would be logged on every
	// reconcile: these clients are the server talking to itself.
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("loopback client: %w", err)
	}
	reconciler := reconcilers.NewLeaseEndpointReconciler(
		reconcilers.NewEndpointsAdapter(client.CoreV1(), client.DiscoveryV1()),
		newMasterLeases(k.etcd, k.etcdPrefix, endpointLeaseTTL))
	if err := reconciler.ValidateIP(k.advertise); err != nil {
		// An address etcd would not hold a lease for (a single-stack
		// v6 cluster's v4 address): kube-apiserver refuses to start.
		return fmt.Errorf("--advertise-address %s: %w", k.advertise, err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	c := kubernetesservice.New(kubernetesservice.Config{
		PublicIP:           k.advertise,
		EndpointReconciler: reconciler,
		EndpointInterval:   endpointInterval,
		ServiceIP:          k.serviceIP,
		ServicePort:        443,
		PublicServicePort:  k.port,
	}, client, factory.Core().V1().Services())
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	k.log.Info("keeping the kubernetes Service's endpoints", "address", k.advertise.String(), "port", k.port)
	c.Start(ctx.Done())
	<-ctx.Done()
	// Stop removes this address within two intervals, then gives up.
	c.Stop()
	return nil
}

// advertiseAddress is the address the kubernetes Service's endpoints name
// for this API server, chosen as kube-apiserver chooses its
// --advertise-address default: the flag, else the bind address unless it is
// a wildcard or loopback (which no endpoint may name), else the address of
// the host's default-route interface. nil when there is none: the
// endpoints are then not kept.
func advertiseAddress(flag, bind string) (net.IP, error) {
	if flag != "" {
		ip := net.ParseIP(flag)
		if ip == nil {
			return nil, ConfigErrorf("--advertise-address %q is not an IP address", flag)
		}
		return ip, nil
	}
	ip := net.ParseIP(bind)
	if ip == nil {
		// A host name: kube-apiserver takes only addresses.
		ip = net.IPv4zero
	}
	resolved, err := utilnet.ResolveBindAddress(ip)
	if err != nil {
		return nil, nil //nolint:nilerr // no default route: nothing to advertise, as documented
	}
	return resolved, nil
}
