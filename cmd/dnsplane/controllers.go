package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dnsplane/dnsplane/internal/controllers"
)

// registerControllerFlags adds the flags of the in-process controllers
// (kube-controller-manager's names) with def as --controllers' default.
func registerControllerFlags(f *pflag.FlagSet, o *controllers.Options, def []string) {
	f.StringSliceVar(&o.Controllers, "controllers", def, `controllers to run, as kube-controller-manager's --controllers: "*" all (docs/controllers.md), "name" one, "-name" not that one`)
	f.DurationVar(&o.NodeMonitorGracePeriod, "node-monitor-grace-period", 0, "how long a Node may go without renewing its Lease before it is marked Ready=Unknown (default 50s, as kube-controller-manager)")
}

func newControllersCommand() *cobra.Command {
	var c controllers.Manager
	var logLevel string
	var list bool
	cmd := &cobra.Command{
		Use:   "controllers --kubeconfig FILE",
		Short: "Run upstream's kube-controller-manager controllers against an API server",
		Long: `Run kube-controller-manager's controllers (k8s.io/kubernetes/pkg/controller),
linked into this binary, against the API server of --kubeconfig: Deployments,
ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, endpoints and
EndpointSlices, node lifecycle and taint eviction, namespaces, garbage
collection, service accounts and more. dnsplane up runs them in its own
process; this command runs them apart, say on another machine or as
several replicas, which elect a leader through the Lease
kube-system/kube-controller-manager (the one a real kube-controller-manager
takes, so that the two never both act). --list prints every controller, and
why it runs or not (docs/controllers.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				return printControllers(cmd)
			}
			if c.Kubeconfig == "" {
				return &exitError{code: exitUsage, msg: "--kubeconfig is required"}
			}
			if _, err := controllers.Select(controllers.Descriptors(), c.Controllers); err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if (c.ClusterSigningCertFile == "") != (c.ClusterSigningKeyFile == "") {
				return &exitError{code: exitUsage, msg: "--cluster-signing-cert-file and --cluster-signing-key-file go together"}
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			c.Logger = logger
			if err := c.Run(cmd.Context()); err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig of the API server")
	f.BoolVar(&c.LeaderElect, "leader-elect", true, "run only while holding the Lease kube-system/"+controllers.LeaseName+" (several replicas)")
	registerControllerFlags(f, &c.Options, []string{"*"})
	f.StringVar(&c.ClusterSigningCertFile, "cluster-signing-cert-file", "", "CA certificate that signs approved CertificateSigningRequests (none: no CSR is signed)")
	f.StringVar(&c.ClusterSigningKeyFile, "cluster-signing-key-file", "", "the CA's private key")
	f.BoolVar(&c.UseServiceAccountCredentials, "use-service-account-credentials", false, "run each controller as its own service account in kube-system, as kube-controller-manager's flag (docs/controllers.md#identities)")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&list, "list", false, "print every controller, and why it runs or does not, and exit")
	return cmd
}

// printControllers prints the descriptors as a table.
func printControllers(cmd *cobra.Command) error {
	var b strings.Builder
	for _, d := range controllers.Descriptors() {
		state, why := "runs", d.Why
		if d.Disabled != "" {
			state, why = "disabled", d.Disabled
		}
		fmt.Fprintf(&b, "%-48s %-8s %s\n", d.Name, state, why)
	}
	_, err := fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}
