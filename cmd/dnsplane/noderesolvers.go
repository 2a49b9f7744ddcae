package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// nodeResolvers returns the node's upstream resolvers — upstreams when
// given, else the nameservers of the resolv.conf at path — and its host
// search list, which always comes from that file. With upstreams the file
// may be absent, unless --upstream-resolv-conf was named explicitly.
func nodeResolvers(cmd *cobra.Command, path string, upstreams []string) (nameservers, search []string, err error) {
	host, err := resolvconf.ParseFile(path)
	if err != nil && (len(upstreams) == 0 || cmd.Flags().Changed("upstream-resolv-conf")) {
		return nil, nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--upstream-resolv-conf: %s", err)}
	}
	if len(upstreams) > 0 {
		return upstreams, host.Searches, nil
	}
	if len(host.Nameservers) == 0 {
		return nil, nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--upstream-resolv-conf %s: no nameserver lines; give --upstream", path)}
	}
	return host.Nameservers, host.Searches, nil
}
