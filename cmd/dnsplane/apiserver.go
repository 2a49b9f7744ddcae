package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dnsplane/dnsplane/internal/apiserver"
	"github.com/dnsplane/dnsplane/internal/features"
)

// apiServerFlags are the flags shared by `apiserver` and `up`.
type apiServerFlags struct {
	o        apiserver.Options
	limits   apiserver.Limits
	gates    string
	logLevel string
}

func (a *apiServerFlags) register(f *pflag.FlagSet) {
	o := &a.o
	f.StringVar(&o.DataDir, "data-dir", defaultDataDir(), "directory for certificates, credentials, the kubeconfig and embedded etcd data")
	f.StringVar(&o.BindAddress, "bind-address", "127.0.0.1", "address to serve HTTPS on")
	f.IntVar(&o.SecurePort, "secure-port", 6443, "port to serve HTTPS on (0 picks a free one)")
	f.StringSliceVar(&o.EtcdServers, "etcd-servers", nil, "external etcd client URLs (default: embedded etcd in --data-dir)")
	f.StringVar(&o.EtcdCAFile, "etcd-cafile", "", "CA bundle to verify the etcd servers")
	f.StringVar(&o.EtcdCertFile, "etcd-certfile", "", "client certificate for etcd")
	f.StringVar(&o.EtcdKeyFile, "etcd-keyfile", "", "client key for etcd")
	f.StringVar(&o.EtcdPrefix, "etcd-prefix", "/registry", "key prefix of every object in etcd")
	f.DurationVar(&o.EtcdReadyTimeout, "etcd-ready-timeout", 60*time.Second, "how long the embedded etcd may take to start before start-up fails")
	f.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", 5*time.Minute, "how often old etcd revisions are compacted, as kube-apiserver")
	f.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", "10.96.0.0/12", "CIDR Service cluster IPs are allocated from")
	f.StringVar(&o.TokenAuthFile, "token-auth-file", "", `extra bearer tokens, one "token,user,uid,\"group1,group2\"" per line`)
	f.StringVar(&a.gates, "feature-gates", "", "comma-separated Name=true|false pairs: RelaxedDNSSearchValidation, PodDNSCustomPolicy, PodDNSAutopath, ServerSideFieldValidation")
	f.StringVar(&a.logLevel, "log-level", "info", "debug, info, warn or error")
	a.registerLimits(f)
}

// registerLimits adds kube-apiserver's request limit flags (same names and
// defaults) and the connection limit, which is ours.
func (a *apiServerFlags) registerLimits(f *pflag.FlagSet) {
	l := &a.limits
	*l = apiserver.DefaultLimits()
	f.IntVar(&l.MaxRequestsInflight, "max-requests-inflight", l.MaxRequestsInflight,
		"maximum number of non-mutating requests (get, list) served at once; more get 429 with Retry-After. Watches and health probes are not counted. 0 = no limit")
	f.IntVar(&l.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", l.MaxMutatingRequestsInflight,
		"maximum number of mutating requests (create, update, patch, delete) served at once; more get 429 with Retry-After. 0 = no limit")
	f.DurationVar(&l.RequestTimeout, "request-timeout", l.RequestTimeout,
		"deadline of every request but watches; a smaller ?timeout= on the request wins. Requests over it get 504. 0 = no deadline")
	f.IntVar(&l.MaxConnections, "max-connections", 0,
		"maximum number of open HTTPS connections; more are closed as soon as they are accepted. 0 = derived from the open files limit, keeping descriptors for etcd and DNS")
}

// roles starts what runs next to the API server once it is up, and
// returns the banner to print and a function that stops it all.
type roles func(ctx context.Context, logger *slog.Logger, run *apiserver.Running) (banner string, stop func(), err error)

// run starts the API server and then the other roles, prints the banner,
// and serves until the command's context ends (SIGINT/SIGTERM); then it
// stops the roles and shuts the API server down gracefully.
func (a *apiServerFlags) run(cmd *cobra.Command, start roles) error {
	fg, err := features.Parse(a.gates)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	logger, err := newLogger(cmd.ErrOrStderr(), a.logLevel)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if err := a.limits.Validate(); err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	o := a.o
	limits := a.limits
	o.Gates, o.Logger, o.Limits = fg, logger, &limits
	if len(o.EtcdServers) == 0 {
		// The embedded etcd runs in a child process of this binary, so that
		// its failures (a full disk, too many open files, a damaged data
		// dir) never take down what else runs here: docs/operations.md.
		exe, err := os.Executable()
		if err != nil {
			return &exitError{code: exitInvalid, msg: fmt.Sprintf("finding this binary to run the embedded etcd: %v", err)}
		}
		o.EtcdMemberCommand = []string{exe, etcdMemberCommand}
	}
	run, err := apiserver.Start(cmd.Context(), o)
	if err != nil {
		return &exitError{code: exitInvalid, msg: err.Error()}
	}
	stopAPIServer := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return run.Stop(ctx)
	}
	banner, stopRoles, err := start(cmd.Context(), logger, run)
	if err != nil {
		_ = stopAPIServer()
		return err
	}
	fmt.Fprint(cmd.OutOrStdout(), banner)
	select {
	case <-cmd.Context().Done():
	case <-waitChan(run):
	}
	logger.Info("shutting down")
	stopRoles()
	if err := stopAPIServer(); err != nil {
		return &exitError{code: exitInvalid, msg: err.Error()}
	}
	return nil
}

func waitChan(run *apiserver.Running) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- run.Wait() }()
	return ch
}

func newAPIServerCommand() *cobra.Command {
	var a apiServerFlags
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run the Kubernetes-compatible API server over etcd",
		Long: `Run the Kubernetes-compatible API server. By default it runs an embedded
single-member etcd in --data-dir; --etcd-servers uses an external etcd cluster.
On first start it writes a CA, a serving certificate, an admin token and an
admin kubeconfig (<data-dir>/kubeconfig) that kubectl can use as is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.run(cmd, func(_ context.Context, _ *slog.Logger, run *apiserver.Running) (string, func(), error) {
				return fmt.Sprintf("dnsplane API server at %s\nkubeconfig: %s\n", run.URL, run.Kubeconfig), func() {}, nil
			})
		},
	}
	a.register(cmd.Flags())
	return cmd
}

func defaultDataDir() string {
	if dir, err := os.UserHomeDir(); err == nil {
		return filepath.Join(dir, ".dnsplane")
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
