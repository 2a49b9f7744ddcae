package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/upctl"
)

// newNodeCommand is `dnsplane node stop|start|list`, which act on the
// nodes of the `up` running over --data-dir through its control socket
// (docs/nodes.md).
func newNodeCommand() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Stop and start the nodes of a running dnsplane up",
		Long: `Stop and start the nodes of the dnsplane up running over --data-dir,
through its control socket <data-dir>/up.sock.

Stopping a node stops its agent and its node cache, as if its machine went
away: its Lease is no longer renewed, so after --node-monitor-grace-period
(50s by default) the node lifecycle controller marks it Ready=Unknown,
taints it node.kubernetes.io/unreachable and marks its pods not ready,
and their endpoints stop being ready in their Services' EndpointSlices.
Starting it brings the agent and the node cache back.`,
		Example: `  dnsplane node list
  dnsplane node stop node-2
  dnsplane node start node-2`,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data dir of the running dnsplane up")
	set := func(use, short string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " NAME",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				st, err := upctl.Client{DataDir: dataDir}.SetNode(cmd.Context(), args[0], on)
				if err != nil {
					return nodeError(err)
				}
				state := "started"
				if !on {
					state = "stopped"
				}
				if !st.Changed {
					state = "already " + state
				}
				fmt.Fprintf(cmd.OutOrStdout(), "node %s %s\n", st.Name, state)
				return nil
			},
		}
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the nodes and whether each runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := upctl.Client{DataDir: dataDir}.Nodes(cmd.Context())
			if err != nil {
				return nodeError(err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, "NAME\tSTATE")
			for _, n := range l.Nodes {
				state := "running"
				if !n.Running {
					state = "stopped"
				}
				fmt.Fprintf(w, "%s\t%s\n", n.Name, state)
			}
			return nil
		},
	}
	cmd.AddCommand(set("stop", "Stop a node's agent and node cache, as if its machine went away", false),
		set("start", "Start a stopped node's agent and node cache again", true), list)
	return cmd
}

// nodeError maps the control socket's errors to exit statuses: no `up`
// running is a usage error (the wrong --data-dir), the rest invalid input.
func nodeError(err error) error {
	if errors.Is(err, upctl.ErrNotRunning) {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	return &exitError{code: exitInvalid, msg: err.Error()}
}
