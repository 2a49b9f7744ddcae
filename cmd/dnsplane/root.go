package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/dnscli"
	"github.com/dnsplane/dnsplane/internal/webhook/dnsresource"
)

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dnsplane",
		Short: "A Kubernetes-compatible DNS control plane",
		Long: `dnsplane is a Kubernetes-compatible DNS control plane: pod DNS policies
(Custom, ClusterFirstWithAutopath), relaxed search validation, server-side
field validation, and cluster DNS on CoreDNS.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newUpCommand(),
		newAPIServerCommand(),
		dnscli.NewDNSCommand(),
		dnscli.NewNodeCacheCommand(),
		newValidateCommand(),
		newResolvconfCommand(),
		newExecCommand(),
		newCorefileCommand(),
		newVersionCommand(),
		newEtcdMemberCommand(),
		newOperatorCommand(),
		newAgentCommand(),
		newNodeCommand(),
		newStatusCommand(),
		newControllersCommand(),
		newSchedulerCommand(),
		newCorefileCheckCommand(),
		newWebhookCommand(dnsresource.Review),
	)
	return root
}
