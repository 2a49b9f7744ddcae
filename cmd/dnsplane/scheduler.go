package main

import (
	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/scheduler"
)

func newSchedulerCommand() *cobra.Command {
	var kubeconfig, logLevel string
	var leaderElect bool
	cmd := &cobra.Command{
		Use:   "scheduler --kubeconfig FILE",
		Short: "Run kube-scheduler: bind pods to nodes",
		Long: `Run upstream's kube-scheduler (k8s.io/kubernetes/pkg/scheduler, the version
dnsplane is built with) against the API server of --kubeconfig, with its
default profile: pods without a node are bound to one, with Scheduled and
FailedScheduling events and the PodScheduled condition.

With --leader-elect (the default, as kube-scheduler's) it schedules only
while it holds the Lease kube-system/kube-scheduler, the one kube-scheduler
uses, and exits with status 1 when it loses it. It serves no port: no
metrics, healthz or configz. See docs/controllers.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := clientConfig(kubeconfig); err != nil {
				return err
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			c := &scheduler.Scheduler{Kubeconfig: kubeconfig, Logger: logger, LeaderElect: leaderElect}
			if err := c.Run(cmd.Context()); err != nil {
				// A lost lease is not a usage error; kube-scheduler exits 1.
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the API server")
	f.BoolVar(&leaderElect, "leader-elect", true, "schedule only while holding the Lease kube-system/kube-scheduler, so that several schedulers can run")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}
