package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/features"
	"github.com/dnsplane/dnsplane/internal/offlinevalidate"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
	"github.com/dnsplane/dnsplane/internal/validation"
)

func newResolvconfCommand() *cobra.Command {
	var (
		file            string
		hostResolvConf  string
		clusterDomain   string
		clusterDNS      []string
		nodeCache       []string
		nodeIPs         []string
		namespace       string
		gates           string
		nameserverFirst bool
	)
	cmd := &cobra.Command{
		Use:   "resolvconf -f pod.yaml",
		Short: "Print the /etc/resolv.conf a pod would get",
		Long: `Print the /etc/resolv.conf a pod would get on a node, for every dnsPolicy
(ClusterFirst, ClusterFirstWithHostNet, Default, None, Custom,
ClusterFirstWithAutopath), with dnsConfig merged and the node's limits applied
as kubelet applies them. The input may be a Pod or any object with a pod
template (its template is used). The pod is validated first.

Warnings that kubelet would emit as pod events (DNSConfigForming,
MissingClusterDNS) are printed on standard error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fg, err := features.Parse(gates)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			node, err := nodeConfig(hostResolvConf, clusterDomain, clusterDNS, nodeCache, nodeIPs)
			if err != nil {
				return err
			}
			srcs, err := offlinevalidate.Sources([]string{file}, false, cmd.InOrStdin())
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if len(srcs) != 1 {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("-f %s: want one file, found %d", file, len(srcs))}
			}
			v := offlinevalidate.Validator{Options: validation.OptionsFromGates(fg)}
			pod, findings, err := v.Pod(cmd.Context(), srcs[0])
			if errors.Is(err, offlinevalidate.ErrInvalid) {
				for _, f := range findings {
					fmt.Fprintln(cmd.ErrOrStderr(), f.String())
				}
				return &exitError{code: exitInvalid}
			}
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			if namespace != "" {
				pod.Namespace = namespace
			}
			if pod.Namespace == "" {
				pod.Namespace = "default"
			}
			conf, warnings, err := resolvconf.ForPod(pod, node)
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			for _, w := range warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s: %s\n", w.Reason, w.Message)
			}
			order := resolvconf.RuntimeOrder
			if nameserverFirst {
				order = resolvconf.NameserverFirst
			}
			_, err = cmd.OutOrStdout().Write(conf.RenderOrder(order))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "filename", "f", "", "pod manifest (or any pod template carrier); - for standard input")
	f.StringVar(&hostResolvConf, "host-resolv-conf", "/etc/resolv.conf", `the node's resolv.conf, as kubelet --resolv-conf ("" = none: 127.0.0.1 and "search .")`)
	f.StringVar(&clusterDomain, "cluster-domain", "cluster.local", "cluster domain, as kubelet --cluster-domain")
	f.StringSliceVar(&clusterDNS, "cluster-dns", []string{"10.96.0.10"}, "cluster DNS server IPs, as kubelet --cluster-dns")
	f.StringSliceVar(&nodeCache, "node-cache", nil, "node-local DNS cache IPs: the nameservers of ClusterFirstWithAutopath pods")
	f.StringSliceVar(&nodeIPs, "node-ip", nil, `node IPs, used only with --host-resolv-conf ""`)
	f.StringVarP(&namespace, "namespace", "n", "", "pod namespace (default: the manifest's, else default)")
	f.StringVar(&gates, "feature-gates", "", "comma-separated Name=true|false pairs: RelaxedDNSSearchValidation, PodDNSCustomPolicy, PodDNSAutopath")
	f.BoolVar(&nameserverFirst, "nameserver-first", false, "print nameserver lines before the search line (the layout of the Custom policy design), instead of the runtime's order")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// nodeConfig turns the kubelet-style flags into what resolvconf needs.
func nodeConfig(hostFile, clusterDomain string, clusterDNS, nodeCache, nodeIPs []string) (resolvconf.Node, error) {
	node := resolvconf.Node{ClusterDomain: clusterDomain, HostResolvConf: hostFile != ""}
	for flag, list := range map[string][]string{"--cluster-dns": clusterDNS, "--node-cache": nodeCache} {
		for _, s := range list {
			if net.ParseIP(s) == nil {
				return node, &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %q is not an IP address", flag, s)}
			}
		}
	}
	node.ClusterDNS, node.NodeCache = clusterDNS, nodeCache
	for _, s := range nodeIPs {
		ip := net.ParseIP(s)
		if ip == nil {
			return node, &exitError{code: exitUsage, msg: fmt.Sprintf("--node-ip: %q is not an IP address", s)}
		}
		node.NodeIPs = append(node.NodeIPs, ip)
	}
	if hostFile != "" {
		host, err := resolvconf.ParseFile(hostFile)
		if errors.Is(err, fs.ErrNotExist) {
			return node, &exitError{code: exitUsage, msg: err.Error()}
		}
		if err != nil {
			return node, &exitError{code: exitInvalid, msg: err.Error()}
		}
		node.Host = host
	}
	return node, nil
}
