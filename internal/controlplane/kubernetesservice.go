package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/controlplane/kubernetesservice"
)

// kube-apiserver's defaults: --endpoint-reconciler-type=lease reconciles
// every 10 s with leases of 15 s (pkg/controlplane, DefaultEndpointReconcilerInterval
// and DefaultEndpointReconcilerTTL).
const (
	endpointInterval = 10 * time.Second
	endpointLeaseTTL = 15 * time.Second
)

// kubernetesEndpoints runs the kubernetesservice controller: the
// kubernetes Service's Endpoints and EndpointSlice (default/kubernetes)
// at the addresses of the API servers that share this etcd, each holding
// a lease on its address; a clean stop removes its own at once, a crashed
// one drops out when its lease expires.
type kubernetesEndpoints struct {
	loopback   *rest.Config
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
	client, err := loopbackClient(k.loopback)
	if err != nil {
		return err
	}
	c, err := kubernetesservice.New(kubernetesservice.Config{
		Client:            client,
		Leases:            kubernetesservice.NewEtcdLeases(k.etcd, k.etcdPrefix, endpointLeaseTTL),
		PublicIP:          k.advertise,
		PublicServicePort: k.port,
		ServiceIP:         k.serviceIP,
		ServicePort:       443,
		Interval:          endpointInterval,
		Log:               k.log,
	})
	if err != nil {
		// An address no endpoint may name: kube-apiserver refuses to
		// start.
		return fmt.Errorf("--advertise-address %w", err)
	}
	k.log.Info("keeping the kubernetes Service's endpoints", "address", k.advertise.String(), "port", k.port)
	return c.Run(ctx)
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
