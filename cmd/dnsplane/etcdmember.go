package main

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/etcdproc"
)

// etcdMemberCommand is the name `up` and `apiserver` re-run this binary with
// to host the embedded etcd in a child process (internal/etcdproc).
const etcdMemberCommand = "etcd-member"

// newEtcdMemberCommand is hidden: only the supervisor runs it, and it talks
// to the supervisor over its stdin and stdout.
func newEtcdMemberCommand() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:    etcdMemberCommand,
		Short:  "Run the embedded etcd for a supervising dnsplane process",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
			// Signals are caught (main's NotifyContext) and ignored here:
			// the member stops when the supervisor closes its stdin.
			ctx := context.WithoutCancel(cmd.Context())
			if err := etcdproc.RunMember(ctx, dataDir, cmd.InOrStdin(), cmd.OutOrStdout(), logger); err != nil {
				// The supervisor got the error on stdout already.
				return &exitError{code: exitInvalid}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "etcd data dir")
	_ = cmd.MarkFlagRequired("data-dir")
	return cmd
}
