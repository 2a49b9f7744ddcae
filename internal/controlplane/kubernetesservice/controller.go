package kubernetesservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// name is the Service's, in default.
const name = "kubernetes"

// Config is what the controller keeps: kube-apiserver's kubernetesservice.Config.
type Config struct {
	Client kubernetes.Interface // this API server's own, with admin rights
	Leases Leases
	// PublicIP is the address the endpoints name for this API server
	// (--advertise-address); PublicServicePort its secure port.
	PublicIP          net.IP
	PublicServicePort int
	// ServiceIP and ServicePort are the Service's (the first address of
	// the service range, 443).
	ServiceIP   net.IP
	ServicePort int
	// Interval is the time between reconciles (kube-apiserver: 10 s).
	Interval time.Duration
	Log      *slog.Logger
}

// Controller keeps the Service and its endpoints while it runs.
type Controller struct {
	cfg       Config
	endpoints *endpoints
}

// New checks that PublicIP is one the endpoints may name (not loopback,
// link-local or multicast: core validation's rule, which kube-apiserver's
// lease reconciler applies at start) and returns the controller.
func New(cfg Config) (*Controller, error) {
	if err := corevalidation.ValidateEndpointIP(cfg.PublicIP.String(), nil).ToAggregate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.PublicIP, err)
	}
	return &Controller{cfg: cfg, endpoints: &endpoints{
		client: cfg.Client,
		leases: cfg.Leases,
		name:   name,
		ports:  []corev1.EndpointPort{{Name: "https", Port: int32(cfg.PublicServicePort), Protocol: corev1.ProtocolTCP}}, //nolint:gosec // a TCP port
	}}, nil
}

// Run takes out an address a crash of this API server left, waits until
// the API server is ready, then reconciles every Interval until ctx ends,
// and removes this API server's address on the way out (bounded by two
// intervals, so a lost etcd cannot hold up the stop).
func (c *Controller) Run(ctx context.Context) error {
	ip := c.cfg.PublicIP.String()
	switch err := c.endpoints.remove(ctx, ip, false); {
	case err == nil:
		c.cfg.Log.Error("Found stale data, removed previous endpoints on kubernetes service, apiserver didn't exit successfully previously")
	case !errors.Is(err, ErrNoLease):
		c.cfg.Log.Error("Error removing old endpoints from kubernetes service", "err", err)
	}
	if err := c.waitReady(ctx); err == nil {
		wait.NonSlidingUntilWithContext(ctx, func(ctx context.Context) {
			if err := c.sync(ctx); err != nil {
				c.cfg.Log.Error("unable to sync kubernetes service", "err", err)
			}
		}, c.cfg.Interval)
	}

	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*c.cfg.Interval)
	defer cancel()
	if err := c.endpoints.remove(stopCtx, ip, true); err != nil {
		c.cfg.Log.Error("Unable to remove endpoints from kubernetes service", "err", err)
	}
	return nil
}

// waitReady polls /readyz as kube-apiserver's controller does before its
// first write.
func (c *Controller) waitReady(ctx context.Context) error {
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var code int
		c.cfg.Client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		return code == http.StatusOK, nil
	})
}

// sync creates the Service when it is missing and reconciles its
// endpoints. A Service that exists is left as it is: kube-apiserver has
// not corrected one since 1.17.
func (c *Controller) sync(ctx context.Context) error {
	if err := c.ensureService(ctx); err != nil {
		return err
	}
	return c.endpoints.reconcile(ctx, c.cfg.PublicIP.String(), false)
}

func (c *Controller) ensureService(ctx context.Context) error {
	client := c.cfg.Client.CoreV1().Services(metav1.NamespaceDefault)
	_, err := client.Get(ctx, name, metav1.GetOptions{})
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	single := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: metav1.NamespaceDefault,
			Labels:    map[string]string{"provider": "kubernetes", "component": "apiserver"},
		},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{
				Name:       "https",
				Protocol:   corev1.ProtocolTCP,
				Port:       int32(c.cfg.ServicePort),                         //nolint:gosec // a TCP port
				TargetPort: intstr.FromInt32(int32(c.cfg.PublicServicePort)), //nolint:gosec // a TCP port
			}},
			ClusterIP:       c.cfg.ServiceIP.String(),
			IPFamilyPolicy:  &single,
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	if _, err := client.Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the kubernetes service: %w", err)
	}
	return nil
}
