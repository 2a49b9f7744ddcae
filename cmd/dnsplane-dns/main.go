// Command dnsplane-dns is dnsplane's data plane alone: the cluster DNS
// (`dns`) and the node cache (`nodecache`), the commands the DaemonSets of
// a cluster run, without the control plane the full dnsplane binary
// links (k8s.io/kubernetes, k8s.io/apiserver, etcd's server). It is
// smaller, starts faster and keeps less resident (docs/kubernetes.md,
// "Images"). This package only wires the commands of internal/dnscli.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	// Mozilla's root CAs, used only where the system has none: the image
	// ships no ca-certificates, and a DNS-over-TLS forwarder without a
	// caBundle trusts the system's roots (docs/dns-operator.md). Pinned by
	// go.mod, so the image stays reproducible.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/dnsplane/dnsplane/internal/cliexit"
	"github.com/dnsplane/dnsplane/internal/dnscli"
)

// binary is this command's name, as its help and version give it.
const binary = "dnsplane-dns"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   binary,
		Short: "dnsplane's data plane: the cluster DNS and the node cache",
		Long: `dnsplane-dns runs dnsplane's data plane alone: the cluster DNS server (dns)
and the per-node DNS cache (nodecache), as the full dnsplane binary's
commands of the same names do, without the control plane.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		dnscli.NewDNSCommand(),
		dnscli.NewNodeCacheCommand(),
		dnscli.NewVersionCommand(binary),
	)
	root.SetArgs(args)
	return cliexit.Status(root.ExecuteContext(ctx), stderr)
}
