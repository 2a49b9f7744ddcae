// Command burst times a burst of pods through a cluster's controllers,
// scheduler, node agent and DNS (bench/controllers.sh):
//
//	go run ./bench/burst --kubeconfig K --namespace b1 --mode pods --count 1000 \
//	    --dns 127.0.0.1:5353 --procs controllers=123,scheduler=456
//
// It creates a headless Service and a ClusterIP Service selecting app=burst
// in --namespace, then either creates --count pods with no spec.nodeName
// (--mode pods) or scales a Deployment from 0 to --count (--mode
// deployment), and prints, in seconds from the first create (or the
// scale), when all --count pods were
//
//	created   (pods mode: every create returned; deployment mode: seen)
//	bound     spec.nodeName set (the scheduler)
//	running   status.phase Running (the node agent)
//	endpoints listed as ready in both Services' EndpointSlices
//	resolvable the headless Service's A records from --dns (over TCP) hold
//	          all --count pod IPs
//
// and, over the same interval, the API server's apiserver_request_total
// (its /metrics, summed by verb, resource and subresource; failed requests
// apart, with their code) divided by --count, and for each process of
// --procs the CPU time (utime+stime of /proc/PID/stat) and the largest
// VmRSS sampled every 200 ms. --mode idle only samples --procs for
// --duration. Output is one fact per line
// (`stage NAME SECONDS`, `proc NAME cpu_s X rss_before_mib Y rss_max_mib
// Z`, `requests VERB RESOURCE SUBRESOURCE PER_POD`), for the script to
// tabulate. A stage not reached within --timeout prints `-`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "burst:", err)
		os.Exit(1)
	}
}

type options struct {
	kubeconfig string
	namespace  string
	mode       string
	count      int
	clients    int
	dns        string
	domain     string
	procs      []proc
	duration   time.Duration
	timeout    time.Duration
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("burst", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required except for --mode idle)")
	fs.StringVar(&o.namespace, "namespace", "burst", "namespace of the Services and pods; created if missing")
	fs.StringVar(&o.mode, "mode", "pods", "pods, deployment or idle")
	fs.IntVar(&o.count, "count", 1000, "pods")
	fs.IntVar(&o.clients, "clients", 8, "concurrent creates (pods mode)")
	fs.StringVar(&o.dns, "dns", "", "ADDR:PORT of the cluster DNS to ask for the headless Service (required except for --mode idle)")
	fs.StringVar(&o.domain, "cluster-domain", "cluster.local", "cluster domain")
	procs := fs.String("procs", "", "NAME=PID,... processes to sample")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long --mode idle samples")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up on the stages not reached by then")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if o.procs, err = parseProcs(*procs); err != nil {
		return nil, err
	}
	switch {
	case o.mode == "idle":
	case o.mode != "pods" && o.mode != "deployment":
		return nil, fmt.Errorf("--mode %q: want pods, deployment or idle", o.mode)
	case o.kubeconfig == "" || o.dns == "":
		return nil, errors.New("--kubeconfig and --dns are required")
	case o.count < 1 || o.count > 100000 || o.clients < 1:
		return nil, errors.New("want --count in 1-100000 and --clients ≥ 1")
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.mode == "idle" {
		s := startSampler(o.procs)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.duration):
		}
		s.stop(os.Stdout)
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	// The creates are the user's burst: no client-side limit slows them.
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return burst(ctx, cs, o)
}

// parseProcs parses NAME=PID,...
func parseProcs(s string) ([]proc, error) {
	var out []proc
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		name, pid, ok := strings.Cut(f, "=")
		var n int
		if _, err := fmt.Sscan(pid, &n); !ok || name == "" || err != nil || n <= 0 {
			return nil, fmt.Errorf("--procs %q: want NAME=PID pairs separated by commas", f)
		}
		out = append(out, proc{name: name, pid: n})
	}
	return out, nil
}
