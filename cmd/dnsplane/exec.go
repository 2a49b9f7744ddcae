package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

// execPodexec replaces this process with `dnsplane __podexec DIR -- CMD…`,
// so the command's exit status is dnsplane exec's.
var execPodexec = func(argv []string) error {
	return syscall.Exec("/proc/self/exe", argv, os.Environ())
}

func newExecCommand() *cobra.Command {
	var namespace, kubeconfig, dataDir, stateDir string
	cmd := &cobra.Command{
		Use:   "exec [-n NAMESPACE] POD -- COMMAND [ARG...]",
		Short: "Run a command in a pod's sandbox, with its resolv.conf and hosts on /etc",
		Long: `Run a command in the pod's sandbox, as kubectl exec does through the API
server: in the pod's own user, PID, UTS and mount namespaces, which its
node's agent holds from when the pod runs until it goes (docs/exec.md). The
pod's resolv.conf and hosts are read-only on /etc/resolv.conf and
/etc/hosts, the hostname is the pod's, the data dir is hidden, and the
command runs as the pod's securityContext user and groups (runAsUser,
runAsGroup, supplementalGroups; 65534:65534 when the pod sets none) mapped
onto the pod's own unprivileged host ID range, with no capabilities and
no_new_privs. Only a privileged container (under the API server's
--allow-privileged) runs as host root, with the pod's files on /etc. Needs
root on Linux, as the sandboxes' sockets are root's. The exit status is the
command's.

The pod is read through the API: --kubeconfig, or <data-dir>/kubeconfig with
--data-dir, else $KUBECONFIG, else the kubeconfig of dnsplane up's default
data dir (~/.dnsplane/kubeconfig) when there is one, as dnsplane status and
node find it, else ~/.kube/config. The pod's sandbox is reached in the
state dir of the agent of its node (spec.nodeName): --state-dir, else, with
--data-dir, <data-dir>/nodes/<node> when up runs several nodes (--nodes)
and <data-dir>/agent when it runs one. Without either, a kubeconfig that
dnsplane up wrote (<data-dir>/kubeconfig) names its data dir; else
/var/lib/dnsplane/agent.`,
		Example: `  dnsplane exec -n ns1 web -- cat /etc/resolv.conf
  sudo dnsplane exec --data-dir ~/.dnsplane web -- getent hosts kubernetes.default`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash != 1 || len(args) < 2 {
				return &exitError{code: exitUsage, msg: "want POD -- COMMAND [ARG...]"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runtime.GOOS != "linux" {
				return &exitError{code: podexec.ExitCannotRun, msg: podexec.Enter("").Error()}
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			switch {
			case kubeconfig != "":
				rules.ExplicitPath = kubeconfig
			case dataDir != "":
				rules.ExplicitPath = filepath.Join(dataDir, "kubeconfig")
			case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "":
				// As dnsplane status and node: up's default data dir,
				// when it has a kubeconfig, before ~/.kube/config.
				if def := filepath.Join(defaultDataDir(), "kubeconfig"); fileExists(def) {
					rules.ExplicitPath = def
				}
			}
			if dataDir == "" && stateDir == "" {
				// The kubeconfig up wrote sits in its data dir: the
				// user's KUBECONFIG leads to the node's files too.
				dataDir = upDataDir(kubeconfigPath(rules))
			}
			cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
			if namespace == "" {
				ns, _, err := cc.Namespace()
				if err != nil {
					return kubeconfigError(err)
				}
				namespace = ns
			}
			cfg, err := cc.ClientConfig()
			if err != nil {
				return kubeconfigError(err)
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			dir, pod, err := podexec.FindPodDir(cmd.Context(), client, podexec.StateDirFor(stateDir, dataDir), namespace, args[0])
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			// As kubectl exec without -c: the pod's first container's
			// identity, so both ways into a pod run the same user.
			id, err := podexec.IdentityOf(pod, "")
			if err != nil {
				return &exitError{code: exitInvalid, msg: err.Error()}
			}
			if !id.Privileged {
				return execInSandbox(cmd.Context(), podexec.StateDirFor(stateDir, dataDir)(pod.Spec.NodeName), pod, id, args[1:])
			}
			// A privileged container is host root, as the agent's exec
			// server runs it too (docs/exec.md).
			argv := append([]string{os.Args[0], podexec.Subcommand}, podexec.Args(dir, id, args[1:])...)
			err = execPodexec(argv)
			return &exitError{code: podexec.ExitCannotRun, msg: fmt.Sprintf("running %s: %v", podexec.Subcommand, err)}
		},
	}
	f := cmd.Flags()
	f.StringVarP(&namespace, "namespace", "n", "", "the pod's namespace (default: the kubeconfig context's, else default)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig to reach the API server (default: <data-dir>/kubeconfig with --data-dir, else as kubectl)")
	f.StringVar(&dataDir, "data-dir", "", "dnsplane up's data dir: its kubeconfig, and the state dir of the pod's node (<data-dir>/nodes/<node>, or <data-dir>/agent for one node)")
	f.StringVar(&stateDir, "state-dir", "", "the node agent's --state-dir (default: the pod's node's under --data-dir, else "+podexec.DefaultStateDir+")")
	return cmd
}

// runPodexec is the hidden `dnsplane __podexec DIR -- COMMAND…` that
// dnsplane exec and the agent's exec server start: it returns only when
// the command could not be run.
func runPodexec(args []string, stderr interface{ Write([]byte) (int, error) }) int {
	code, err := podexec.Main(args)
	fmt.Fprintln(stderr, "error:", err)
	return code
}

// execInSandbox runs argv in the pod's sandbox with this process's
// standard streams and environment; the result is the command's exit
// status. An interrupt (ctx) closes the connection, which kills the
// session.
func execInSandbox(ctx context.Context, stateDir string, pod *corev1.Pod, id podexec.Identity, argv []string) error {
	conn, err := podsandbox.DialSession(ctx, stateDir, pod.UID)
	if err != nil {
		return &exitError{code: podexec.ExitCannotRun, msg: fmt.Sprintf("pod %s/%s: its sandbox: %v", pod.Namespace, pod.Name, err)}
	}
	defer conn.Close()
	var env []string
	for _, e := range os.Environ() {
		if k, _, ok := strings.Cut(e, "="); ok && k != "" {
			env = append(env, e)
		}
	}
	// The command runs where this one was started, as it did when
	// dnsplane exec ran it on the host: `./gai` runs this directory's.
	wd, _ := os.Getwd()
	resp, err := podsandbox.Run(ctx, conn, podsandbox.Request{Argv: argv, Env: env, UID: id.UID, GID: id.GID, Groups: id.Groups, Dir: wd},
		[]*os.File{os.Stdin, os.Stdout, os.Stderr})
	switch {
	case err != nil:
		return &exitError{code: podexec.ExitCannotRun, msg: err.Error()}
	case resp.Error != "":
		return &exitError{code: podexec.ExitCannotRun, msg: resp.Error}
	case resp.ExitCode != 0:
		return &exitError{code: resp.ExitCode}
	}
	return nil
}

// runPodsandbox is the hidden `dnsplane __podsandbox` the node agent starts
// as a pod's sandbox, and the sandbox as each session's last step: it
// returns only on failure.
func runPodsandbox(args []string, stderr interface{ Write([]byte) (int, error) }) int {
	code, err := podsandbox.Main(args)
	fmt.Fprintln(stderr, "error:", err)
	return code
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// kubeconfigError is the usage error for a configuration that cannot be
// loaded; for none at all it says how to get one rather than client-go's
// advice to set KUBERNETES_MASTER.
func kubeconfigError(err error) error {
	if clientcmd.IsEmptyConfig(err) {
		return &exitError{code: exitUsage, msg: "no kubeconfig: start dnsplane up and export KUBECONFIG=<its data dir>/kubeconfig (it prints the path; ~/.dnsplane/kubeconfig, the default, is found without it), or pass --data-dir or --kubeconfig"}
	}
	return &exitError{code: exitUsage, msg: err.Error()}
}

// kubeconfigPath is the file rules load the configuration from: the
// explicit one, else the first of the precedence ($KUBECONFIG's list,
// ~/.kube/config) that exists; "" when there is none.
func kubeconfigPath(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	for _, p := range rules.Precedence {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// upDataDir is the data dir of `dnsplane up` whose admin kubeconfig is at
// path (<data-dir>/kubeconfig next to its agent's or nodes' state), or ""
// when path is not one.
func upDataDir(path string) string {
	if path == "" || filepath.Base(path) != "kubeconfig" {
		return ""
	}
	dir := filepath.Dir(path)
	for _, state := range []string{"agent", "nodes"} {
		if fi, err := os.Stat(filepath.Join(dir, state)); err == nil && fi.IsDir() {
			return dir
		}
	}
	return ""
}
