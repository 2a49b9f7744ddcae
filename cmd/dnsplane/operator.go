package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/operator/crd"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// corefileCheckCommand is the hidden command the operator re-runs this
// binary with to dry-load a Corefile (operator.ExecChecker).
const corefileCheckCommand = "corefile-check"

func newOperatorCommand() *cobra.Command {
	var kubeconfig, serviceRange, clusterDomain, image, logLevel string
	var printCRD bool
	var metricsURLs []string
	var healthInterval time.Duration
	cmd := &cobra.Command{
		Use:   "operator --kubeconfig FILE",
		Short: "Run the DNS operator: reconcile the DNS resource into the cluster DNS",
		Long: `Run the DNS operator against the API server of --kubeconfig (dnsplane's, or any
Kubernetes cluster with the DNS CustomResourceDefinition --print-crd prints).

It reconciles the operator.dnsplane.io/v1 DNS "default" (creating it when
missing) into the ConfigMap dnsplane-system/dns-default (key Corefile), the
cluster DNS Service dnsplane-system/dns-default (the 10th address of
--service-cluster-ip-range) and the DaemonSet dnsplane-system/dns-default,
and writes the DNS status, with the forward health of every nameserver
read from the cluster DNS's metrics. See docs/dns-operator.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printCRD {
				out, err := crd.DNS()
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			_, rng, err := net.ParseCIDR(serviceRange)
			if err != nil {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("--service-cluster-ip-range %q: %v", serviceRange, err)}
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			cfg, err := operatorClientConfig(kubeconfig)
			if err != nil {
				return err
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			dns, err := versioned.NewForConfig(cfg)
			if err != nil {
				return err
			}
			checker, err := selfChecker()
			if err != nil {
				return err
			}
			if healthInterval <= 0 {
				return &exitError{code: exitUsage, msg: "--health-interval must be positive"}
			}
			oc := operator.Config{
				ServiceRange:   rng,
				Render:         render.Options{ClusterDomain: clusterDomain},
				Checker:        checker,
				Image:          image,
				Logger:         logger,
				HealthInterval: healthInterval,
				ScrapePods:     len(metricsURLs) == 0,
			}
			if len(metricsURLs) > 0 {
				oc.Health = operator.MetricsScraper{URLs: operator.StaticURLs(metricsURLs)}
			}
			c, err := operator.NewController(oc, kube, dns)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			return c.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the API server (empty in a pod: its service account)")
	f.StringVar(&serviceRange, "service-cluster-ip-range", "10.96.0.0/12", "the cluster's service range; the cluster DNS Service gets its 10th address")
	f.StringVar(&clusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	f.StringVar(&image, "dns-image", operator.DefaultImage, "image of the cluster DNS pods; its entrypoint must take the dns command (the dnsplane-dns image, or the full dnsplane image)")
	// --image was the flag's first name; scripts that use it keep working.
	f.StringVar(&image, "image", operator.DefaultImage, "")
	_ = f.MarkDeprecated("image", "use --dns-image")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringArrayVar(&metricsURLs, "metrics-url", nil, "Prometheus endpoint of a cluster DNS instance to read the forward health from (repeatable); none scrapes the DaemonSet's pods on port 9153")
	f.DurationVar(&healthInterval, "health-interval", operator.DefaultHealthInterval, "how often the forward health is read")
	f.BoolVar(&printCRD, "print-crd", false, "print the DNS CustomResourceDefinition (for a Kubernetes cluster) and exit")
	return cmd
}

// selfChecker dry-loads Corefiles by running this binary's hidden
// corefile-check command.
func selfChecker() (operator.ExecChecker, error) {
	self, err := os.Executable()
	if err != nil {
		return operator.ExecChecker{}, fmt.Errorf("finding this binary for the Corefile dry load: %w", err)
	}
	return operator.ExecChecker{Path: self, Args: []string{corefileCheckCommand}}, nil
}

// exitDryLoadFailed is corefile-check's status when the dry load gave no
// verdict (the process ran out of descriptors or memory, or was
// interrupted): the operator retries it instead of rejecting the
// Corefile (operator.DryLoadError).
const exitDryLoadFailed = 3

// newCorefileCheckCommand is hidden: the operator runs it with a Corefile
// on stdin. Exit status 0 loads, 1 (operator.ExitCorefileRejected) does
// not, with the reason on stderr; any other is no verdict.
func newCorefileCheckCommand() *cobra.Command {
	return &cobra.Command{
		Use:    corefileCheckCommand,
		Short:  "Dry-load the Corefile on standard input",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			text, err := io.ReadAll(cmd.InOrStdin())
			if err != nil {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("reading the Corefile: %v", err)}
			}
			err = coredns.DryLoad(cmd.Context(), string(text))
			switch {
			case err == nil:
				return nil
			case coredns.IsLoadError(err):
				return &exitError{code: operator.ExitCorefileRejected, msg: err.Error()}
			default:
				return &exitError{code: exitDryLoadFailed, msg: err.Error()}
			}
		},
	}
}

// operatorClientConfig is --kubeconfig's, or in a pod (the Helm chart's
// Deployment, docs/kubernetes.md) with no --kubeconfig, the pod's service
// account, as client-go's in-cluster config reads it.
func operatorClientConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientConfig(kubeconfig)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--kubeconfig is required outside a pod (%v)", err)}
	}
	return cfg, nil
}
