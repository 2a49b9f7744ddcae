package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/datadirlock"
	"github.com/dnsplane/dnsplane/internal/statuscheck"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

// newStatusCommand is `dnsplane status`: the health of each component of
// the `up` running over --data-dir (internal/statuscheck).
func newStatusCommand() *cobra.Command {
	var (
		dataDir string
		output  string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Report the health of each component of a running dnsplane up",
		Long: `Report the health of each component of the dnsplane up running over
--data-dir, one line each, from its <data-dir>/up.json: the API server
(/readyz) and etcd (/readyz/etcd) with the admin kubeconfig, the
controllers, scheduler and DNS operator (through the control socket
<data-dir>/up.sock, and the DNS resource's Degraded condition), the
cluster DNS and each node cache (a DNS query to each), and each node's
agent (its Node Ready and its Lease renewed). A node stopped with
"dnsplane node stop" shows as Stopped.

Exit status: 0 when every component is healthy, 1 when some are not
(each named with why), 2 when no dnsplane up runs over --data-dir (no
up.json, or a stale one an up that crashed left).`,
		Example: `  dnsplane status
  dnsplane status --data-dir /tmp/dnsplane -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("-o %q: want json, or no -o for a table", output)}
			}
			r, err := statuscheck.Gather(cmd.Context(), dataDir, timeout)
			if nr, ok := errors.AsType[*statuscheck.NotRunningError](err); ok {
				if running := upWithoutState(dataDir, nr); running != "" {
					return &exitError{code: exitInvalid, msg: running}
				}
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			w := cmd.OutOrStdout()
			if output == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSTATUS\tMESSAGE")
				for _, c := range r.Components {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Status, c.Message)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if bad := r.Unhealthy(); len(bad) > 0 {
				names := make([]string, len(bad))
				for i, b := range bad {
					names[i] = fmt.Sprintf("%s (%s)", b.Name, b.Status)
				}
				return &exitError{code: exitInvalid, msg: fmt.Sprintf("%d of %d components of dnsplane up (pid %d) are not healthy: %s",
					len(bad), len(r.Components), r.Up.PID, strings.Join(names, ", "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", defaultDataDir(), "data dir of the running dnsplane up")
	f.StringVarP(&output, "output", "o", "", `"json" for the report as JSON (up.json's content and each component)`)
	f.DurationVar(&timeout, "timeout", 2*time.Second, "how long each check may take")
	return cmd
}

// upWithoutState says why an `up` holding dataDir's lock (internal/
// datadirlock) has no up.json to report from: it is still starting (up.json
// is written once everything serves), or the file was removed. "" when no
// `up` holds it, or up.json was there (Gather judged its pid).
func upWithoutState(dataDir string, nr *statuscheck.NotRunningError) string {
	if nr.StalePID != 0 {
		return ""
	}
	h, err := datadirlock.Holder(dataDir)
	if err != nil || h == nil || strings.HasSuffix(h.Holder, " apiserver") {
		return ""
	}
	who := "dnsplane up"
	if h.PID > 0 {
		who = fmt.Sprintf("dnsplane up (pid %d)", h.PID)
	}
	return fmt.Sprintf("%s is running but has no %s: it is still starting, or the file was removed (stop it and start it again to get it back)",
		who, upstate.Path(dataDir))
}
