package dnsroles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/operator"
)

// clusterDNS serves the Corefile the DNS operator publishes in
// dnsplane-system/dns-default, applying changes with a graceful restart
// (coredns.RunFromConfigMapWithOptions), so a DNS change takes effect
// without a restart of `up` and without a failed query.
type clusterDNS struct {
	listen     string
	kubeconfig string
	// filesDir receives the ConfigMap's CA bundles.
	filesDir string
	logger   *slog.Logger
	// first receives the outcome of the first Corefile tried.
	first chan error
	done  chan error
	stop  context.CancelFunc

	mu      sync.Mutex
	serving string // the Corefile serving, "" before the first
	notify  *notifier
}

// notifier is who to tell when the served Corefile changes (the operator,
// for its status); shared between Roles and the component built later.
type notifier struct {
	mu sync.Mutex
	fn func()
}

func (n *notifier) set(fn func()) {
	n.mu.Lock()
	n.fn = fn
	n.mu.Unlock()
}

func (n *notifier) call() {
	n.mu.Lock()
	fn := n.fn
	n.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func (c *clusterDNS) Name() string { return "cluster-dns" }

func (c *clusterDNS) Start(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return fmt.Errorf("cluster DNS: reading the kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("cluster DNS: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stop, c.done = cancel, make(chan error, 1)
	go func() {
		c.done <- coredns.RunFromConfigMapWithOptions(runCtx, client, operator.Namespace, operator.Name,
			coredns.ConfigMapOptions{Logger: c.logger, OnApply: c.applied, FilesDir: c.filesDir})
	}()
	select {
	case err := <-c.first:
		if err == nil {
			return nil
		}
		cancel()
		if err := <-c.done; err != nil {
			c.logger.Warn("cluster DNS stopped", "err", err)
		}
		var inUse *coredns.AddrInUseError
		if errors.As(err, &inUse) {
			return fmt.Errorf("cluster DNS: %w (--dns-listen picks another address)", err)
		}
		return fmt.Errorf("cluster DNS on %s: %w", c.listen, err)
	case <-ctx.Done():
		cancel()
		if err := <-c.done; err != nil {
			c.logger.Warn("cluster DNS stopped", "err", err)
		}
		return fmt.Errorf("cluster DNS: waiting for the operator's Corefile: %w", context.Cause(ctx))
	}
}

// applied records the outcome of a Corefile tried.
func (c *clusterDNS) applied(corefile string, err error) {
	c.mu.Lock()
	first := c.serving == "" && c.first != nil
	if err == nil {
		c.serving = corefile
	}
	c.mu.Unlock()
	if first {
		select {
		case c.first <- err:
		default:
		}
	}
	if c.notify != nil {
		c.notify.call()
	}
}

func (c *clusterDNS) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		c.stop()
		return <-c.done
	case err := <-c.done:
		if err == nil {
			err = errors.New("stopped")
		}
		return fmt.Errorf("cluster DNS: %w", err)
	}
}

// ClusterDNSInstances reports the in-process cluster DNS to the DNS
// operator in place of a DaemonSet's pods: one instance, available once
// it serves, updated when it serves the published Corefile.
type ClusterDNSInstances struct{ r *Roles }

// Pods implements operator.PodCounter.
func (i *ClusterDNSInstances) Pods(corefileHash string) operator.Pods {
	c := i.r.cluster
	c.mu.Lock()
	serving := c.serving
	c.mu.Unlock()
	p := operator.Pods{Desired: 1}
	if serving != "" {
		p.Available = 1
		if operator.CorefileHash([]byte(serving)) == corefileHash {
			p.Updated = 1
		}
	}
	return p
}

// OnApplied implements operatorrole.Instances: fn is called whenever the
// cluster DNS has tried a Corefile.
func (i *ClusterDNSInstances) OnApplied(fn func()) { i.r.cluster.notify.set(fn) }

// Scrape implements operator.HealthSource: the in-process cluster DNS's
// CoreDNS counts its forward health checks in this process's default
// Prometheus registry (its Corefile exports no metrics endpoint: the port
// belongs to the host).
func (i *ClusterDNSInstances) Scrape(ctx context.Context) (operator.FailureCounts, error) {
	return operator.GathererSource{Gatherer: prometheus.DefaultGatherer, Instance: "cluster-dns"}.Scrape(ctx)
}
