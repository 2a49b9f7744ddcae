package statuscheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/upctl"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

// Report is what `dnsplane status` prints: the up.json it read and one
// Result per component.
type Report struct {
	Up         upstate.State `json:"up"`
	Healthy    bool          `json:"healthy"`
	Components []Result      `json:"components"`
}

// Unhealthy are the results that are not Healthy.
func (r Report) Unhealthy() []Result {
	var out []Result
	for _, c := range r.Components {
		if c.Status != Healthy {
			out = append(out, c)
		}
	}
	return out
}

// NotRunningError is Gather's error when no `up` runs over the data dir:
// no up.json, or one whose `up` is gone (a crash, SIGKILL).
type NotRunningError struct {
	DataDir string
	// StalePID is the pid of a stale up.json, 0 when there is none.
	StalePID int
	Reason   string
}

func (e *NotRunningError) Error() string {
	start := fmt.Sprintf("start one with dnsplane up --data-dir %s", e.DataDir)
	if e.StalePID == 0 {
		return fmt.Sprintf("no dnsplane up is running with data dir %s (no %s); %s", e.DataDir, upstate.FileName, start)
	}
	return fmt.Sprintf("dnsplane up with data dir %s is not running (stale %s from pid %d: %s); %s", e.DataDir, upstate.FileName, e.StalePID, e.Reason, start)
}

// Gather reads the up.json of dataDir and checks every component of its
// `up`, each for at most timeout; it returns within about 1.5 timeouts. Its
// error is a *NotRunningError when no `up` runs there.
func Gather(ctx context.Context, dataDir string, timeout time.Duration) (Report, error) {
	st, err := upstate.Read(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return Report{}, &NotRunningError{DataDir: dataDir}
	}
	if err != nil {
		return Report{}, err
	}
	if err := alive(st.PID); err != nil {
		return Report{}, &NotRunningError{DataDir: dataDir, StalePID: st.PID, Reason: err.Error()}
	}
	// The control socket says which in-process components run and which
	// nodes are stopped; a socket no one serves means the pid is some
	// other process now.
	// It answers from memory, in milliseconds: half the timeout keeps
	// the whole report within about 1.5 timeouts when `up` hangs.
	sock := upctl.Client{DataDir: dataDir}
	sockTimeout := timeout / 2
	sctx, cancel := context.WithTimeout(ctx, sockTimeout)
	comps, listErr := sock.Components(sctx)
	var nodes upctl.NodeList
	if listErr == nil {
		nodes, listErr = sock.Nodes(sctx)
	}
	cancel()
	switch {
	case errors.Is(listErr, upctl.ErrNotRunning):
		return Report{}, &NotRunningError{DataDir: dataDir, StalePID: st.PID, Reason: "pid runs, but no one serves " + upctl.SocketPath(dataDir)}
	case errors.Is(listErr, context.DeadlineExceeded):
		listErr = fmt.Errorf("the control socket %s did not answer within %s (is pid %d stopped or stuck?)", upctl.SocketPath(dataDir), sockTimeout, st.PID)
	case listErr != nil:
		listErr = fmt.Errorf("the control socket: %w", listErr)
	}
	checks, err := Plan(st, comps.Components, nodes, listErr)
	if err != nil {
		return Report{}, err
	}
	r := Report{Up: st, Components: Run(ctx, checks, timeout)}
	r.Healthy = len(r.Unhealthy()) == 0
	return r, nil
}

// alive says whether pid runs: signal 0 checks without signalling, and a
// process of another user (EPERM) runs too. A zombie, which a killed `up`
// whose parent does not reap stays as, answers signal 0 but runs no more
// (proc(5): state Z in /proc/PID/stat).
func alive(pid int) error {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return errors.New("no such process: it crashed or was killed")
	}
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("pid %d: %w", pid, err)
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// "PID (comm) S ...": comm may hold spaces and parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			return errors.New("the process exited (a zombie): it crashed or was killed")
		}
	}
	return nil
}

// Plan is the checks of the `up` st describes, in the order of the
// report: the API server and etcd, the in-process components, the cluster
// DNS, then each node's cache and agent. comps and nodes are what the
// control socket answered, listErr why it did not.
func Plan(st upstate.State, comps []upctl.ComponentStatus, nodes upctl.NodeList, listErr error) ([]Check, error) {
	cfg, err := clientcmd.BuildConfigFromFlags(st.APIServer, st.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig of up.json: %w", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig %s: %w", st.Kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	dc, err := versioned.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	base := strings.TrimSuffix(cfg.Host, "/")
	component := func(name string) Running { return Running{Label: name, Components: comps, ListErr: listErr} }
	domain := dns.Fqdn(st.ClusterDomain)
	checks := []Check{
		Ready{Label: "apiserver", URL: base + "/readyz", Client: hc},
		Ready{Label: "etcd", URL: base + "/readyz/etcd", Client: hc},
		component("controllers"),
		component("scheduler"),
		Operator{Running: component("dns-operator"), DNS: func(ctx context.Context) (*operatorv1.DNS, error) {
			return dc.OperatorV1().DNSes().Get(ctx, "default", metav1.GetOptions{})
		}},
		DNSQuery{Label: "cluster-dns", Addr: st.ClusterDNS, QName: domain, QType: dns.TypeSOA},
	}
	running := map[string]bool{}
	for _, n := range nodes.Nodes {
		running[n.Name] = n.Running
	}
	reader := clientReader{cs}
	for _, n := range st.Nodes {
		var stopped error
		if on, known := running[n.Name]; known && !on {
			stopped = fmt.Errorf("%w with dnsplane node stop; start it with: dnsplane node start %s --data-dir %s", ErrStopped, n.Name, st.DataDir)
		}
		if n.NodeCache != "" {
			checks = append(checks, DNSQuery{Label: "nodecache/" + n.Name, Addr: n.NodeCache, QName: domain, QType: dns.TypeSOA, StoppedErr: stopped})
		}
		checks = append(checks, Agent{Node: n.Name, Reader: reader, StoppedErr: stopped})
	}
	return checks, nil
}

// clientReader is NodeReader over client-go.
type clientReader struct{ cs kubernetes.Interface }

func (c clientReader) Node(ctx context.Context, name string) (*corev1.Node, error) {
	return c.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

func (c clientReader) Lease(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	return c.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
}
