// Command apiload drives N concurrent client-go clients against a running
// API server and reports, per operation, the requests, errors, requests/s and
// latency percentiles.
//
//	go run ./bench/apiload --kubeconfig <path> --clients 8 --duration 20s --op create|get|mixed --namespace bench
//
// --field-validation Strict|Warn|Ignore sets the creates' fieldValidation
// (KEP-2885); without it the parameter is not sent and the server applies its
// default, Warn.
//
// It talks only to the server named in --kubeconfig (there is no default, so
// it never falls back to ~/.kube/config). Every client has its own connection
// and no client-side rate limit. A run ends after --duration or
// --max-requests requests, whichever comes first, or on Ctrl-C; requests in
// flight then finish. Setup failures exit 1 (bad flags 2); failed requests
// during the run are counted, not fatal.
//
// Output: one line per operation on stdout, key=value separated by spaces:
//
//	op=create clients=4 requests=16751 errors=0 rps=1674.7 p50=1.988ms p90=3.864ms p99=8.865ms max=26.425ms
//
// requests counts every completed request, failed or not; rps is the
// successful requests over the wall time of the run (fast failures do not
// inflate it), and the latencies are those of the successful requests.
// Progress and error samples go to stderr.
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
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "apiload:", err)
		return 2
	}
	clients, err := setup(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "apiload: setup:", err)
		return 1
	}
	res := drive(ctx, cfg, clients)
	for _, o := range cfg.ops() {
		fmt.Fprintln(stdout, summarize(res.stats[o]).line(o, cfg.clients, res.elapsed))
	}
	printErrorSamples(stderr, res.stats)
	return 0
}

// ---- flags

// config is the command line.
type config struct {
	kubeconfig     string
	clients        int
	duration       time.Duration
	maxRequests    int64
	op             string // create, get or mixed
	namespace      string
	getPods        int
	requestTimeout time.Duration
	// fieldValidation is metav1.CreateOptions.FieldValidation of every
	// create; "" sends none.
	fieldValidation string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("apiload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the server to load (required)")
	fs.IntVar(&c.clients, "clients", 8, "concurrent clients, each with its own connection")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "how long to run")
	fs.Int64Var(&c.maxRequests, "max-requests", 1_000_000, "stop after this many requests even if --duration has not passed")
	fs.StringVar(&c.op, "op", "create", "create (new pods), get (round-robin over --get-pods pods) or mixed (alternating)")
	fs.StringVar(&c.namespace, "namespace", "bench", "namespace of the pods; created if missing")
	fs.IntVar(&c.getPods, "get-pods", 100, "pods created up front for get and mixed")
	fs.DurationVar(&c.requestTimeout, "request-timeout", 30*time.Second, "timeout of one request")
	fs.StringVar(&c.fieldValidation, "field-validation", "", "fieldValidation of the creates: Strict, Warn or Ignore (default: not sent, the server's default, Warn)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.kubeconfig == "":
		return c, errors.New("--kubeconfig is required")
	case c.clients < 1:
		return c, errors.New("--clients must be at least 1")
	case c.duration <= 0:
		return c, errors.New("--duration must be positive")
	case c.maxRequests < 1:
		return c, errors.New("--max-requests must be at least 1")
	case c.op != "create" && c.op != "get" && c.op != "mixed":
		return c, fmt.Errorf("--op %q: want create, get or mixed", c.op)
	case c.getPods < 1:
		return c, errors.New("--get-pods must be at least 1")
	case c.requestTimeout <= 0:
		return c, errors.New("--request-timeout must be positive")
	case !slices.Contains([]string{"", metav1.FieldValidationStrict, metav1.FieldValidationWarn, metav1.FieldValidationIgnore}, c.fieldValidation):
		// The server would refuse every create with 400; refuse the run
		// instead of counting errors.
		return c, fmt.Errorf("--field-validation %q: want Strict, Warn or Ignore", c.fieldValidation)
	}
	return c, nil
}

// op is one kind of request.
type op int

const (
	opCreate op = iota
	opGet
	numOps
)

func (o op) String() string {
	if o == opCreate {
		return "create"
	}
	return "get"
}

// ops are the operations the run issues, in reporting order.
func (c config) ops() []op {
	switch c.op {
	case "create":
		return []op{opCreate}
	case "get":
		return []op{opGet}
	}
	return []op{opCreate, opGet}
}

// ---- setup

// setup connects one client per worker, makes sure the namespace exists and,
// for get and mixed, that the pods to get exist.
func setup(ctx context.Context, c config, stderr io.Writer) ([]corev1client.CoreV1Interface, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", c.kubeconfig, err)
	}
	fmt.Fprintf(stderr, "apiload: %s against %s, %d clients, %s or %d requests, namespace %s\n",
		c.op, restCfg.Host, c.clients, c.duration, c.maxRequests, c.namespace)
	clients := make([]corev1client.CoreV1Interface, c.clients)
	for i := range clients {
		if clients[i], err = newClient(restCfg); err != nil {
			return nil, err
		}
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := ensureNamespace(sctx, clients[0], c.namespace); err != nil {
		return nil, err
	}
	if c.op != "create" {
		if err := ensurePods(sctx, clients[0], c.namespace, c.getPods); err != nil {
			return nil, err
		}
	}
	// Open every connection now, so no TLS handshake is measured.
	for _, cl := range clients {
		if _, err := cl.Namespaces().Get(sctx, c.namespace, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("warming up a client: %w", err)
		}
	}
	return clients, nil
}

// newClient returns a core/v1 client with its own connection (a Dial
// function keeps client-go from sharing a cached transport), JSON on the
// wire and no client-side throttling.
func newClient(base *rest.Config) (corev1client.CoreV1Interface, error) {
	cfg := rest.CopyConfig(base)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.QPS, cfg.Burst = 1e6, 1e6
	cfg.UserAgent = "dnsplane-apiload"
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	cfg.Dial = dialer.DialContext
	cl, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return cl, nil
}

func ensureNamespace(ctx context.Context, cl corev1client.CoreV1Interface, name string) error {
	_, err := cl.Namespaces().Get(ctx, name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
		return nil
	}
	_, err = cl.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// ensurePods creates the pods get requests read (kept if they exist).
func ensurePods(ctx context.Context, cl corev1client.CoreV1Interface, ns string, n int) error {
	for i := range n {
		_, err := cl.Pods(ns).Create(ctx, newPod(getPodName(i)), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating pod %s: %w", getPodName(i), err)
		}
	}
	return nil
}

func getPodName(i int) string { return "apiload-get-" + strconv.Itoa(i) }

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "apiload"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
		}}},
	}
}

// ---- workers

// result is what a run measured.
type result struct {
	stats   [numOps]*opStats
	elapsed time.Duration
}

// drive runs one worker per client until the duration passes, the request
// budget is spent or ctx ends, and merges what they recorded.
func drive(ctx context.Context, c config, clients []corev1client.CoreV1Interface) result {
	runCtx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	var (
		issued atomic.Int64
		wg     sync.WaitGroup
	)
	// Pod names of this run are unique across runs against one namespace.
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	perWorker := make([][numOps]*opStats, len(clients))
	start := time.Now()
	for i, cl := range clients {
		w := &worker{id: i, cfg: c, pods: cl.Pods(c.namespace), runID: runID, issued: &issued}
		wg.Go(func() { perWorker[i] = w.run(runCtx) })
	}
	wg.Wait()
	res := result{elapsed: time.Since(start)}
	for o := range numOps {
		res.stats[o] = &opStats{}
		for _, s := range perWorker {
			res.stats[o].merge(s[o])
		}
	}
	return res
}

// worker issues requests one after the other on its own client.
type worker struct {
	id     int
	cfg    config
	pods   corev1client.PodInterface
	runID  string
	issued *atomic.Int64 // requests started by all workers
}

// run loops until runCtx ends or the request budget is spent; the requests
// themselves do not use runCtx, so the last ones finish instead of failing.
func (w *worker) run(runCtx context.Context) [numOps]*opStats {
	var stats [numOps]*opStats
	for o := range numOps {
		stats[o] = &opStats{}
	}
	for seq := 0; runCtx.Err() == nil && w.issued.Add(1) <= w.cfg.maxRequests; seq++ {
		o := w.next(seq)
		began := time.Now()
		err := w.do(o, seq)
		stats[o].record(time.Since(began), err)
	}
	return stats
}

// next picks the operation of the worker's seq-th request; mixed alternates,
// half the workers starting with a get.
func (w *worker) next(seq int) op {
	switch w.cfg.op {
	case "create":
		return opCreate
	case "get":
		return opGet
	}
	return op((seq + w.id) % 2)
}

// do sends one request. Gets go round-robin over the pre-created pods, each
// worker starting at a different one.
func (w *worker) do(o op, seq int) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.requestTimeout)
	defer cancel()
	if o == opCreate {
		name := fmt.Sprintf("apiload-%s-%d-%d", w.runID, w.id, seq)
		_, err := w.pods.Create(ctx, newPod(name), metav1.CreateOptions{FieldValidation: w.cfg.fieldValidation})
		return err
	}
	_, err := w.pods.Get(ctx, getPodName((w.id+seq*w.cfg.clients)%w.cfg.getPods), metav1.GetOptions{})
	return err
}

// ---- stats

// maxErrorSamples is how many distinct error messages are kept per op.
const maxErrorSamples = 5

// opStats are the latencies of successful requests and the failures of one
// operation.
type opStats struct {
	latencies []time.Duration
	errors    int
	samples   []string // distinct error messages, at most maxErrorSamples
}

func (s *opStats) record(d time.Duration, err error) {
	if err == nil {
		s.latencies = append(s.latencies, d)
		return
	}
	s.errors++
	s.addSample(err.Error())
}

func (s *opStats) addSample(msg string) {
	if len(s.samples) < maxErrorSamples && !slices.Contains(s.samples, msg) {
		s.samples = append(s.samples, msg)
	}
}

func (s *opStats) merge(o *opStats) {
	s.latencies = append(s.latencies, o.latencies...)
	s.errors += o.errors
	for _, msg := range o.samples {
		s.addSample(msg)
	}
}

// summary is one operation's line of the report.
type summary struct {
	requests, errors   int
	p50, p90, p99, max time.Duration
}

// summarize sorts the latencies and takes nearest-rank percentiles.
func summarize(s *opStats) summary {
	lat := slices.Clone(s.latencies)
	slices.Sort(lat)
	sum := summary{requests: len(lat) + s.errors, errors: s.errors}
	if len(lat) > 0 {
		sum.p50, sum.p90, sum.p99 = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99)
		sum.max = lat[len(lat)-1]
	}
	return sum
}

// percentile is the nearest-rank p-th percentile of sorted, which is not
// empty: the smallest value with at least p% of the values at or below it.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func (s summary) line(o op, clients int, elapsed time.Duration) string {
	rps := float64(s.requests-s.errors) / elapsed.Seconds()
	return fmt.Sprintf("op=%s clients=%d requests=%d errors=%d rps=%.1f p50=%s p90=%s p99=%s max=%s",
		o, clients, s.requests, s.errors, rps, ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max))
}

// ms formats d in milliseconds with three decimals, so every value has the
// same unit.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + "ms"
}

func printErrorSamples(w io.Writer, stats [numOps]*opStats) {
	for o, s := range stats {
		for _, msg := range s.samples {
			fmt.Fprintf(w, "apiload: %s error: %s\n", op(o), msg)
		}
	}
}
