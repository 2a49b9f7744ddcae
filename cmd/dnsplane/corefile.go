package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/offlinevalidate"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

func newCorefileCommand() *cobra.Command {
	var (
		file string
		o    render.Options
	)
	cmd := &cobra.Command{
		Use:   "corefile -f dns.yaml",
		Short: "Print the Corefile the DNS operator renders for a DNS resource",
		Long: `Print the Corefile the DNS operator renders for an operator.dnsplane.io/v1 DNS
manifest, offline: the manifest is decoded strictly and validated with the API
server's rules (as dnsplane validate does), rendered, and loaded into CoreDNS
without serving it.

The kubernetes plugin uses the cluster DNS pod's service account unless
--kubeconfig is given. The dry load replaces what only that pod has (the
service account, mounted CA bundles) with stand-ins; see docs/dns-operator.md.

Problems are printed on standard error as FILE:LINE:COL: FIELD: MESSAGE.
Exit status: 0 printed, 1 invalid or does not load, 2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srcs, err := offlinevalidate.Sources([]string{file}, false, cmd.InOrStdin())
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if len(srcs) != 1 {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("-f %s: want one file, found %d", file, len(srcs))}
			}
			v := offlinevalidate.Validator{ClusterDomain: o.ClusterDomain}
			dns, findings, err := v.DNS(cmd.Context(), srcs[0])
			if errors.Is(err, offlinevalidate.ErrInvalid) {
				for _, f := range findings {
					fmt.Fprintln(cmd.ErrOrStderr(), f.String())
				}
				return &exitError{code: exitInvalid}
			}
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			text, skipped, err := render.Corefile(&dns.Spec, o)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if len(skipped) > 0 {
				// Validation passed, so nothing should be skipped.
				for _, s := range skipped {
					fmt.Fprintln(cmd.ErrOrStderr(), s.String())
				}
				return &exitError{code: exitInvalid}
			}
			offline := o
			offline.Offline = true
			check, _, err := render.Corefile(&dns.Spec, offline)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if err := coredns.DryLoad(cmd.Context(), string(check)); err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			_, err = cmd.OutOrStdout().Write(text)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "filename", "f", "", "DNS manifest; - for standard input")
	f.StringVar(&o.ClusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	f.StringVar(&o.Listen, "listen", ":5353", "where the server blocks listen: :PORT or ADDR:PORT")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig the kubernetes plugin reads (default: the pod's service account)")
	f.StringVar(&o.CABundleDir, "ca-bundle-dir", render.DefaultCABundleDir, "where the cluster DNS reads the CA bundles of TLS forwarders (ca-NAME.crt, the operator ConfigMap's keys)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}
