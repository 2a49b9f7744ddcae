// Package operatorrole runs the DNS operator (internal/operator) as a
// control plane component of `dnsplane up`: it publishes the Corefile the
// in-process cluster DNS serves (dnsroles reads it from the ConfigMap).
package operatorrole

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/operator/operatorpolicy"
	"github.com/dnsplane/dnsplane/internal/operator/render"
	"github.com/dnsplane/dnsplane/internal/pki"
)

// Instances is the in-process cluster DNS as the operator sees it: what
// it serves, a way to be told when that changes, and the kubeconfig it
// reads the API with, which the Corefile names.
type Instances interface {
	operator.PodCounter
	OnApplied(func())
	Kubeconfig(controlplane.Cluster) (string, error)
}

// Config configures the role.
type Config struct {
	// ServiceRange is --service-cluster-ip-range.
	ServiceRange string
	// Render are the Corefile's options; an empty Kubeconfig is the
	// Instances' own (the cluster DNS's identity), or without Instances
	// the admin kubeconfig.
	Render render.Options
	// Checker dry-loads Corefiles (a child process: `up` serves CoreDNS).
	Checker operator.Checker
	// Instances is the cluster DNS, which replaces the DaemonSet: `up`
	// runs no kubelet to run its pods. When it is also an
	// operator.HealthSource, the operator reports its forward health.
	Instances Instances
	// FirstCorefileTimeout bounds Start's wait for the first published
	// Corefile; 0 means DefaultFirstCorefileTimeout.
	FirstCorefileTimeout time.Duration
	// HealthInterval is how often the forward health is read; 0 means
	// operator.DefaultHealthInterval.
	HealthInterval time.Duration
}

// DefaultFirstCorefileTimeout is how long `up` waits for the operator's
// first Corefile. The operator publishes the default spec's Corefile when
// the stored DNS's does not load, so only an operator that cannot write
// (or a default Corefile that does not load) gets there.
const DefaultFirstCorefileTimeout = 2 * time.Minute

// Role is the DNS operator role.
type Role struct{ cfg Config }

// New returns the role.
func New(c Config) *Role { return &Role{cfg: c} }

// Validate implements controlplane.Role.
func (r *Role) Validate() error {
	// A range that does not parse is the control plane's to report.
	_, n, err := net.ParseCIDR(r.cfg.ServiceRange)
	if err != nil {
		return nil
	}
	if _, err := operator.ServiceIP(n); err != nil {
		return controlplane.ConfigErrorf("--service-cluster-ip-range: %v", err)
	}
	if r.cfg.Checker == nil {
		return errors.New("operator role: no Corefile checker")
	}
	return nil
}

// DNSAddresses implements controlplane.DNSAddresser: the cluster DNS
// Service's address (10.96.0.10:53 for 10.96.0.0/12), which this role
// publishes. The API server then refuses a DNS resource forwarding there,
// as docs/dns-operator.md says, instead of storing it for the operator to
// leave out (issue 29); nil when the range is not usable, which Validate
// reports.
func (r *Role) DNSAddresses() []netip.AddrPort {
	_, n, err := net.ParseCIDR(r.cfg.ServiceRange)
	if err != nil {
		return nil
	}
	a, err := operator.ServiceAddress(n)
	if err != nil {
		return nil
	}
	return []netip.AddrPort{a}
}

// Components implements controlplane.Role.
func (r *Role) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	_, n, err := net.ParseCIDR(r.cfg.ServiceRange)
	if err != nil {
		return nil, controlplane.ConfigErrorf("--service-cluster-ip-range %q: %v", r.cfg.ServiceRange, err)
	}
	// Its own user, which the roles the API server reconciles
	// (operatorpolicy) allow what it does and no more.
	kubeconfig := filepath.Join(cl.DataDir, "pki", "dns-operator.kubeconfig")
	if err := pki.WriteRoleKubeconfig(kubeconfig, cl.URL, cl.PKI, operatorpolicy.User, nil); err != nil {
		return nil, fmt.Errorf("operator: credentials: %w", err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("operator: reading its kubeconfig: %w", err)
	}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("operator: %w", err)
	}
	dns, err := versioned.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("operator: %w", err)
	}
	ro := r.cfg.Render
	switch {
	case ro.Kubeconfig != "":
	case r.cfg.Instances != nil:
		// The cluster DNS's own user, not the admin: the Corefile's
		// kubernetes plugin reads the API with it (clusterdnspolicy).
		// A Corefile published before names the admin's and is
		// rendered again, so a restart switches.
		if ro.Kubeconfig, err = r.cfg.Instances.Kubeconfig(cl); err != nil {
			return nil, fmt.Errorf("operator: %w", err)
		}
	default:
		ro.Kubeconfig = cl.Kubeconfig
	}
	if r.cfg.Instances != nil && ro.CABundleDir == "" && cl.DataDir != "" {
		// The in-process cluster DNS writes the bundles there.
		ro.CABundleDir = operator.InProcessCABundleDir(cl.DataDir)
	}
	oc := operator.Config{ServiceRange: n, Render: ro, Checker: r.cfg.Checker, Logger: cl.Logger.With("role", "dns-operator")}
	if r.cfg.Instances != nil {
		oc.Instances = r.cfg.Instances
		if hs, ok := r.cfg.Instances.(operator.HealthSource); ok {
			oc.Health, oc.HealthInterval = hs, r.cfg.HealthInterval
		}
	}
	c, err := operator.NewController(oc, kube, dns)
	if err != nil {
		return nil, fmt.Errorf("operator: %w", err)
	}
	if r.cfg.Instances != nil {
		r.cfg.Instances.OnApplied(c.Enqueue)
	}
	timeout := r.cfg.FirstCorefileTimeout
	if timeout <= 0 {
		timeout = DefaultFirstCorefileTimeout
	}
	return []controlplane.Component{&component{c: c, kube: kube, done: make(chan error, 1), timeout: timeout}}, nil
}

// component runs the controller. Start returns once a Corefile is
// published, so that the cluster DNS started next has one to serve.
type component struct {
	c       *operator.Controller
	kube    kubernetes.Interface
	stop    context.CancelFunc
	done    chan error
	timeout time.Duration
}

func (c *component) Name() string { return "dns-operator" }

func (c *component) Start(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stop = cancel
	go func() { c.done <- c.c.Run(runCtx) }()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	bound := time.NewTimer(c.timeout)
	defer bound.Stop()
	for {
		_, err := c.kube.CoreV1().ConfigMaps(operator.Namespace).Get(ctx, operator.Name, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return fmt.Errorf("dns-operator: waiting for the Corefile: %w", err)
		}
		select {
		case <-ctx.Done():
			cancel()
			return fmt.Errorf("dns-operator: waiting for the Corefile: %w", context.Cause(ctx))
		case err := <-c.done:
			cancel()
			return fmt.Errorf("dns-operator stopped before publishing a Corefile: %w", err)
		case <-bound.C:
			cancel()
			err := <-c.done // nil once the controller stopped for the cancel
			return errors.Join(fmt.Errorf("dns-operator: no Corefile published within %v (kubectl get dns default -o yaml shows why in Degraded)", c.timeout), err)
		case <-t.C:
		}
	}
}

func (c *component) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		c.stop()
		return <-c.done
	case err := <-c.done:
		if err == nil {
			err = errors.New("stopped")
		}
		return err
	}
}
