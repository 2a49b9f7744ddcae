package main

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/webhook"
	"github.com/dnsplane/dnsplane/internal/webhook/poddns"
)

// dnsResource is what the validating webhook reviews besides pod specs:
// the DNS operator's resource, whose review (internal/webhook/dnsresource)
// is passed to newWebhookCommand.
var dnsResource = schema.GroupVersionResource{Group: "operator.dnsplane.io", Version: "v1", Resource: "dnses"}

// newWebhookCommand wires `dnsplane webhook`. dnsReview validates
// operator.dnsplane.io/v1 DNS writes on /validate; nil leaves them to the
// CRD's own rules (the request is allowed, and the start-up log says so).
func newWebhookCommand(dnsReview webhook.Reviewer) *cobra.Command {
	var (
		listen, certDir, namespace, serviceName, secretName string
		mutatingName, validatingName, clusterDomain         string
		kubeconfig, logLevel                                string
		clusterDNS, nodeCache, hostSearch                   []string
	)
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Run the admission webhook that brings dnsplane's pod DNS policies to a stock Kubernetes cluster",
		Long: `Run the mutating and validating admission webhook (admission.k8s.io/v1) for a stock
kube-apiserver: pods and pod templates with dnsPolicy Custom (parameters in the annotation
pod.dnsplane.io/dns-params) or ClusterFirstWithAutopath are validated as dnsplane's API server
validates them and rewritten to dnsPolicy None plus the dnsConfig kubelet needs to write what
dnsplane's agent writes. The webhook keeps its own CA and serving certificate in --secret-name
and the caBundle of both webhook configurations current. See docs/kubernetes.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			for flag, list := range map[string][]string{"--cluster-dns": clusterDNS, "--node-cache": nodeCache} {
				for _, s := range list {
					if net.ParseIP(s) == nil {
						return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %q is not an IP address", flag, s)}
					}
				}
			}
			cfg, err := webhookClientConfig(kubeconfig)
			if err != nil {
				return err
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			certs, err := webhook.NewCerts(webhook.CertConfig{
				Client: client, Namespace: namespace, SecretName: secretName, ServiceName: serviceName,
				MutatingConfiguration: mutatingName, ValidatingConfiguration: validatingName,
				CertDir: certDir, Logger: logger,
			})
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			rev := poddns.NewReviewer(poddns.Cluster{
				ClusterDNS: clusterDNS, ClusterDomain: clusterDomain, NodeCache: nodeCache, HostSearch: hostSearch,
			}, logger)
			routes := webhook.Routes{Mutate: map[schema.GroupVersionResource]webhook.Reviewer{}, Validate: map[schema.GroupVersionResource]webhook.Reviewer{}}
			for gvr := range poddns.Kinds() {
				routes.Mutate[gvr], routes.Validate[gvr] = rev.Mutate, rev.Validate
			}
			if dnsReview != nil {
				routes.Validate[dnsResource] = dnsReview
			} else {
				logger.Warn("no review for " + dnsResource.String() + ": DNS writes are checked by the CRD's rules only")
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("--listen: %v", err)}
			}
			ctx := cmd.Context()
			// The first certificate before serving, so /readyz is honest
			// from the start; later failures only delay a renewal.
			if err := certs.Sync(ctx); err != nil {
				logger.Warn("first certificate sync failed, retrying", "err", err)
			}
			go certs.Run(ctx)
			logger.Info("webhook serving", "listen", ln.Addr().String(), "service", serviceName+"."+namespace+".svc")
			return webhook.Serve(ctx, ln, webhook.Handler(routes, certs.Ready, logger), certs.GetCertificate, logger)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", ":9443", "HTTPS address to serve /mutate, /validate, /healthz and /readyz on")
	f.StringVar(&certDir, "cert-dir", "/tmp/dnsplane-webhook/certs", "directory the current tls.crt, tls.key and ca.crt are written to")
	f.StringVar(&namespace, "namespace", envOr("POD_NAMESPACE", "dnsplane-system"), "namespace of the webhook's Service and Secret")
	f.StringVar(&serviceName, "service-name", "dnsplane-webhook", "Service kube-apiserver reaches the webhook through (the certificate's name)")
	f.StringVar(&secretName, "secret-name", "dnsplane-webhook-certs", "Secret holding the webhook's CA and serving certificate")
	f.StringVar(&mutatingName, "mutating-configuration", "dnsplane", `MutatingWebhookConfiguration whose caBundle is kept current ("" for none)`)
	f.StringVar(&validatingName, "validating-configuration", "dnsplane", `ValidatingWebhookConfiguration whose caBundle is kept current ("" for none)`)
	f.StringSliceVar(&clusterDNS, "cluster-dns", []string{"10.96.0.10"}, "kubelet's --cluster-dns: the nameservers of Custom pods, the second of autopath pods")
	f.StringVar(&clusterDomain, "cluster-domain", "cluster.local", "kubelet's --cluster-domain: $(CLUSTER), and the autopath search name")
	f.StringSliceVar(&nodeCache, "node-cache", []string{"169.254.20.10"}, "the node cache's addresses: the first nameservers of autopath pods")
	f.StringSliceVar(&hostSearch, "host-search", nil, "what $(HOST) expands to: the search list every node's resolv.conf gives pods (empty on most clusters)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the API server (empty: in-cluster)")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

// webhookClientConfig is the in-cluster config when kubeconfig is empty:
// the webhook runs as a Deployment with its own ServiceAccount.
func webhookClientConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientConfig(kubeconfig)
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, &exitError{code: exitUsage, msg: "--kubeconfig is required outside a cluster"}
	}
	if err != nil {
		return nil, fmt.Errorf("in-cluster config: %w", err)
	}
	return cfg, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
