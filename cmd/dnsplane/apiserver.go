package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/apiserver"
	"github.com/dnsplane/dnsplane/internal/features"
)

func newAPIServerCommand() *cobra.Command {
	var (
		o        apiserver.Options
		gates    string
		logLevel string
	)
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run the Kubernetes-compatible API server over etcd",
		Long: `Run the Kubernetes-compatible API server. By default it runs an embedded
single-member etcd in --data-dir; --etcd-servers uses an external etcd cluster.
On first start it writes a CA, a serving certificate, an admin token and an
admin kubeconfig (<data-dir>/kubeconfig) that kubectl can use as is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fg, err := features.Parse(gates)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			o.Gates, o.Logger = fg, logger
			run, err := apiserver.Start(cmd.Context(), o)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dnsplane API server at %s\nkubeconfig: %s\n", run.URL, run.Kubeconfig)
			<-cmd.Context().Done()
			logger.Info("shutting down")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return run.Stop(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data-dir", defaultDataDir(), "directory for certificates, credentials, the kubeconfig and embedded etcd data")
	f.StringVar(&o.BindAddress, "bind-address", "127.0.0.1", "address to serve HTTPS on")
	f.IntVar(&o.SecurePort, "secure-port", 6443, "port to serve HTTPS on (0 picks a free one)")
	f.StringSliceVar(&o.EtcdServers, "etcd-servers", nil, "external etcd client URLs (default: embedded etcd in --data-dir)")
	f.StringVar(&o.EtcdCAFile, "etcd-cafile", "", "CA bundle to verify the etcd servers")
	f.StringVar(&o.EtcdCertFile, "etcd-certfile", "", "client certificate for etcd")
	f.StringVar(&o.EtcdKeyFile, "etcd-keyfile", "", "client key for etcd")
	f.StringVar(&o.EtcdPrefix, "etcd-prefix", "/registry", "key prefix of every object in etcd")
	f.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", "10.96.0.0/12", "CIDR Service cluster IPs are allocated from")
	f.StringVar(&o.TokenAuthFile, "token-auth-file", "", `extra bearer tokens, one "token,user,uid,\"group1,group2\"" per line`)
	f.StringVar(&gates, "feature-gates", "", "comma-separated Name=true|false pairs: RelaxedDNSSearchValidation, PodDNSCustomPolicy, PodDNSAutopath, ServerSideFieldValidation")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

func defaultDataDir() string {
	if dir, err := os.UserHomeDir(); err == nil {
		return dir + "/.dnsplane"
	}
	return ".dnsplane"
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
