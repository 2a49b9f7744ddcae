package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/features"
	"github.com/dnsplane/dnsplane/internal/offlinevalidate"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/validation"
)

func newValidateCommand() *cobra.Command {
	var (
		files     []string
		recursive bool
		gates     string
		quiet     bool
		// As the API server's --allow-privileged: kube-apiserver's
		// default, false, refuses privileged containers.
		allowPrivileged bool
	)
	cmd := &cobra.Command{
		Use:   "validate -f FILE|DIR|- ...",
		Short: "Validate manifests offline with the API server's rules",
		Long: `Validate Kubernetes manifests offline with the rules the dnsplane API server
applies: unknown and duplicate fields (with their line and column), and the pod
DNS rules (dnsPolicy, dnsConfig, dnsParams, KEP-4427 search validation) for
every kind that carries a pod template. Privileged containers are invalid
unless --allow-privileged, as on an API server without that flag.

Each problem is printed as FILE:LINE:COL: FIELD: MESSAGE. Kinds dnsplane does
not serve are reported as skipped. Exit status: 0 all valid, 1 something
invalid, 2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fg, err := features.Parse(gates)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			// Upstream's validation reads it process-wide, as the API
			// server's does; nothing has validated yet.
			if err := upstream.AllowPrivileged(allowPrivileged); err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			srcs, err := offlinevalidate.Sources(files, recursive, cmd.InOrStdin())
			if err != nil {
				if errors.Is(err, offlinevalidate.ErrUsage) {
					return &exitError{code: exitUsage, msg: err.Error()}
				}
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			v := offlinevalidate.Validator{Options: validation.OptionsFromGates(fg)}
			var total, invalid, skipped int
			out := cmd.OutOrStdout()
			for _, src := range srcs {
				for _, o := range v.ValidateSource(cmd.Context(), src) {
					total++
					switch o.Status {
					case offlinevalidate.Invalid:
						invalid++
						for _, f := range o.Findings {
							fmt.Fprintln(out, f.String())
						}
					case offlinevalidate.Skipped:
						skipped++
						fmt.Fprintf(out, "%s:%d:%d: skipped: %s %s is not a kind dnsplane serves\n",
							o.Source, o.Pos.Line, o.Pos.Column, o.APIVersion, o.Kind)
					}
				}
			}
			if !quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d objects: %d valid, %d invalid, %d skipped\n",
					total, total-invalid-skipped, invalid, skipped)
			}
			if invalid > 0 {
				return &exitError{code: exitInvalid}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "manifest file, directory or - for standard input (repeatable)")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "descend into subdirectories of directories given with -f")
	cmd.Flags().StringVar(&gates, "feature-gates", "", "comma-separated Name=true|false pairs: RelaxedDNSSearchValidation, PodDNSCustomPolicy, PodDNSAutopath")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "do not print the summary line")
	cmd.Flags().BoolVar(&allowPrivileged, "allow-privileged", false, "validate as an API server with --allow-privileged: privileged containers are valid")
	return cmd
}
