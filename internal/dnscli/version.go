package dnscli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/version"
)

// corednsModule is the module whose server and plugins the data plane runs.
const corednsModule = "github.com/coredns/coredns"

// fallbackCoreDNS is the release go.mod requires, for a binary whose build
// information lists no modules (test binaries). TestFallbackMatchesGoMod
// keeps it true.
const fallbackCoreDNS = "v1.15.0"

// NewVersionCommand is dnsplane-dns's `version`: the binary's version and
// the CoreDNS release it runs, in `dnsplane version`'s layout. It names no
// Kubernetes release: the data plane links no k8s.io/kubernetes code.
func NewVersionCommand(binary string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the " + binary + " version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s\nCoreDNS %s\n", binary, version.Dnsplane(), moduleVersion(corednsModule, fallbackCoreDNS))
			return err
		},
	}
}

// moduleVersion is the version of module linked into this binary, or
// fallback for a binary built without module information.
func moduleVersion(module, fallback string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fallback
	}
	for _, d := range info.Deps {
		if d.Path != module {
			continue
		}
		if d.Replace != nil && d.Replace.Version != "" {
			return d.Replace.Version
		}
		return d.Version
	}
	return fallback
}
