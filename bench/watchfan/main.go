// Command watchfan measures what an API server pays per pod event while many
// node agents watch their own node's pods: it opens --watchers watches of
// pods, watcher i with fieldSelector spec.nodeName=node-i (what every kubelet
// and dnsplane node agent does), creates --pods pods round-robin over those
// nodes, waits until every watcher got its pods, and reads the server's CPU
// time and memory from /proc/<--pid> before and after.
//
//	go run ./bench/watchfan --kubeconfig <path> --pid <server pid> --watchers 1000 --pods 2000
//
// The watches share --per-conn per connection (HTTP/2 streams), as many
// kubelets behind a few connections would not, but 1,000 TLS connections
// cost the client more than the server work measured here. Run it once
// with --watchers 0 for the cost of the creates alone: the difference is the
// watch fan-out.
//
// Output: one line, key=value separated by spaces:
//
//	watchers=1000 pods=2000 events=2000 foreign=0 elapsed=12.3s cpu_s=8.1 cpu_ms_per_pod=4.05 rss_before_mib=150 rss_after_mib=170 hwm_mib=180
//
// foreign counts events a watcher got for a pod of another node (always 0
// unless the server's field selector is broken). The server must run on this
// machine (its /proc is read).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type config struct {
	kubeconfig, namespace string
	pid                   int
	watchers, pods        int
	perConn, creators     int
	timeout               time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("watchfan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the server under test (required)")
	fs.StringVar(&c.namespace, "namespace", "watchfan", "namespace of the pods (created if missing)")
	fs.IntVar(&c.pid, "pid", 0, "process id of the server under test (required)")
	fs.IntVar(&c.watchers, "watchers", 1000, "watches, one per node")
	fs.IntVar(&c.pods, "pods", 2000, "pods to create, round-robin over the nodes")
	fs.IntVar(&c.perConn, "per-conn", 100, "watches per connection")
	fs.IntVar(&c.creators, "creators", 8, "concurrent pod creators")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "how long the creates and their events may take")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.kubeconfig == "" || c.pid == 0 {
		return c, errors.New("--kubeconfig and --pid are required")
	}
	if c.watchers < 0 || c.pods < 1 || c.perConn < 1 || c.creators < 1 {
		return c, errors.New("--watchers must be >= 0, --pods, --per-conn and --creators >= 1")
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "watchfan:", err)
		return 2
	}
	line, err := measure(ctx, c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "watchfan:", err)
		return 1
	}
	fmt.Fprintln(stdout, line)
	return 0
}

// newClient returns a clientset with a connection of its own: client-go
// shares no transport whose Dial is set.
func newClient(base *rest.Config) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(base)
	cfg.QPS, cfg.Burst = 1e6, 1e6
	cfg.UserAgent = "dnsplane-watchfan"
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	cfg.Dial = dialer.DialContext
	cl, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return cl, nil
}

func measure(ctx context.Context, c config, stderr io.Writer) (string, error) {
	base, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return "", fmt.Errorf("loading %s: %w", c.kubeconfig, err)
	}
	admin, err := newClient(base)
	if err != nil {
		return "", err
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating namespace: %w", err)
	}
	list, err := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", fmt.Errorf("listing pods: %w", err)
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var events, foreign atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var conn *kubernetes.Clientset
	for i := range c.watchers {
		if i%c.perConn == 0 {
			if conn, err = newClient(base); err != nil {
				return "", err
			}
		}
		node := nodeName(i)
		w, err := conn.CoreV1().Pods("").Watch(wctx, metav1.ListOptions{
			ResourceVersion: list.ResourceVersion, FieldSelector: "spec.nodeName=" + node,
		})
		if err != nil {
			return "", fmt.Errorf("watch %d: %w", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				switch p, ok := ev.Object.(*corev1.Pod); {
				case ev.Type == watch.Error:
					if wctx.Err() == nil { // not our own cancel at the end
						fmt.Fprintf(stderr, "watchfan: %s: %v\n", node, ev.Object)
					}
					return
				case ok && p.Spec.NodeName != node:
					foreign.Add(1)
				case ok && ev.Type == watch.Added:
					events.Add(1)
				}
			}
		}()
	}
	fmt.Fprintf(stderr, "watchfan: %d watches open against %s\n", c.watchers, base.Host)

	before, err := settle(ctx, c.pid)
	if err != nil {
		return "", err
	}
	start := time.Now()
	cctx, ccancel := context.WithTimeout(ctx, c.timeout)
	defer ccancel()
	if err := createPods(cctx, base, c); err != nil {
		return "", err
	}
	want := int64(c.pods)
	if c.watchers == 0 {
		want = 0
	}
	for events.Load() < want {
		select {
		case <-cctx.Done():
			return "", fmt.Errorf("got %d of %d events: %w", events.Load(), want, cctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	after, err := readProc(c.pid)
	if err != nil {
		return "", err
	}
	cpu := after.cpu - before.cpu
	return fmt.Sprintf("watchers=%d pods=%d events=%d foreign=%d elapsed=%.1fs cpu_s=%.2f cpu_ms_per_pod=%.3f rss_before_mib=%.0f rss_after_mib=%.0f hwm_mib=%.0f",
		c.watchers, c.pods, events.Load(), foreign.Load(), elapsed.Seconds(), cpu.Seconds(),
		float64(cpu.Microseconds())/1000/float64(c.pods), mib(before.rss), mib(after.rss), mib(after.hwm)), nil
}

// settle waits until the server is idle (at most 10 ms of CPU in half a
// second; 30 s at most): kube-apiserver runs its post-start hooks for a
// while after it is ready, and opening 1,000 watches takes the server a
// moment too, neither of which is the cost of a pod event.
func settle(ctx context.Context, pid int) (procSample, error) {
	prev, err := readProc(pid)
	if err != nil {
		return prev, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return prev, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		cur, err := readProc(pid)
		if err != nil {
			return cur, err
		}
		if cur.cpu-prev.cpu <= 10*time.Millisecond {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}

func nodeName(i int) string { return "node-" + strconv.Itoa(i) }

// createPods creates c.pods pods, pod j on node j mod watchers (node-j
// when there are no watchers), from c.creators clients at once.
func createPods(ctx context.Context, base *rest.Config, c config) error {
	var next atomic.Int64
	errs := make(chan error, c.creators)
	for range c.creators {
		cl, err := newClient(base)
		if err != nil {
			return err
		}
		go func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= c.pods {
					errs <- nil
					return
				}
				node := nodeName(j)
				if c.watchers > 0 {
					node = nodeName(j % c.watchers)
				}
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", j), Labels: map[string]string{"app": "watchfan"}},
					Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
						Name: "c", Image: "registry.k8s.io/pause:3.10",
					}}},
				}
				if _, err := cl.CoreV1().Pods(c.namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating pod %d: %w", j, err)
					return
				}
			}
		}()
	}
	var first error
	for range c.creators {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

type procSample struct {
	cpu      time.Duration
	rss, hwm int64 // bytes
}

// readProc reads a process's CPU time (user+system, /proc/<pid>/stat,
// in clock ticks of 1/100 s, which is USER_HZ on Linux) and its resident and
// peak resident memory (/proc/<pid>/status).
func readProc(pid int) (procSample, error) {
	var s procSample
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// The command name may hold spaces: fields start after its ')'.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return s, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return s, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
	}
	s.cpu = time.Duration(utime+stime) * 10 * time.Millisecond
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			s.rss = kb << 10
		case "VmHWM":
			s.hwm = kb << 10
		}
	}
	return s, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
