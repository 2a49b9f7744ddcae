package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/version"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the dnsplane version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// kubectl version's layout: ours, then the Kubernetes
			// release whose validation, controllers and scheduler are
			// linked in.
			fmt.Fprintf(cmd.OutOrStdout(), "dnsplane %s\nKubernetes %s\n", dnsplaneVersion(), version.Kubernetes())
			return nil
		},
	}
}

// dnsplaneVersion is this binary's version (internal/version), as
// `dnsplane version` and up.json give it.
func dnsplaneVersion() string { return version.Dnsplane() }
