package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const (
	app          = "burst"
	headless     = "burst-headless"
	clusterIPSvc = "burst"
)

var stages = []string{"created", "bound", "running", "endpoints", "resolvable"}

func burst(ctx context.Context, cs kubernetes.Interface, o *options) error {
	if err := setup(ctx, cs, o); err != nil {
		return err
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(o.namespace))
	pods := f.Core().V1().Pods().Lister().Pods(o.namespace)
	eps := f.Discovery().V1().EndpointSlices().Lister().EndpointSlices(o.namespace)
	// Shutdown waits for the informers, which stop on this context only.
	infCtx, stopInformers := context.WithCancel(ctx)
	f.Start(infCtx.Done())
	defer f.Shutdown()
	defer stopInformers()
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer of %v did not sync", typ)
		}
	}
	before, err := requestTotals(ctx, cs)
	if err != nil {
		return err
	}
	smp := startSampler(o.procs)
	start := time.Now()
	reached := map[string]time.Duration{}
	var createErr atomic.Value
	createsDone := make(chan struct{})
	if o.mode == "pods" {
		go func() {
			defer close(createsDone)
			if err := createPods(ctx, cs, o); err != nil {
				createErr.Store(err)
			}
		}()
	} else {
		close(createsDone)
		patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, o.count)
		if _, err := cs.AppsV1().Deployments(o.namespace).Patch(ctx, app, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("scaling the Deployment: %w", err)
		}
	}
	resolved := make(chan time.Duration, 1)
	dnsCtx, stopDNS := context.WithCancel(ctx)
	defer stopDNS()
	go pollDNS(dnsCtx, o, start, resolved)

	deadline := time.After(o.timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for len(reached) < len(stages) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			fmt.Fprintf(os.Stderr, "burst: %s: stages not reached within %v: %s\n", o.namespace, o.timeout, progress(pods, eps, o))
			break wait
		case d := <-resolved:
			reached["resolvable"] = d
		case <-tick.C:
		}
		if err, ok := createErr.Load().(error); ok {
			return err
		}
		now := time.Since(start)
		c := counts(pods, eps)
		done := map[string]bool{
			"created":   c.pods >= o.count && (o.mode != "pods" || closed(createsDone)),
			"bound":     c.bound >= o.count,
			"running":   c.running >= o.count,
			"endpoints": c.endpoints[headless] >= o.count && c.endpoints[clusterIPSvc] >= o.count,
		}
		for s, ok := range done {
			if _, seen := reached[s]; ok && !seen {
				reached[s] = now
			}
		}
	}
	elapsed := time.Since(start)
	stopDNS()
	smp.stop(os.Stdout)
	after, err := requestTotals(ctx, cs)
	if err != nil {
		return err
	}
	for _, s := range stages {
		if d, ok := reached[s]; ok {
			fmt.Printf("stage %s %.2f\n", s, d.Seconds())
		} else {
			fmt.Printf("stage %s -\n", s)
		}
	}
	fmt.Printf("window %.2f\n", elapsed.Seconds())
	printRequests(before, after, o.count)
	return nil
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// setup creates the namespace, the two Services and, in deployment mode,
// the Deployment with 0 replicas.
func setup(ctx context.Context, cs kubernetes.Interface, o *options) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace: %w", err)
	}
	for _, svc := range []*corev1.Service{service(headless, corev1.ClusterIPNone), service(clusterIPSvc, "")} {
		if _, err := cs.CoreV1().Services(o.namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("service %s: %w", svc.Name, err)
		}
	}
	if o.mode != "deployment" {
		return nil
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: podSpec()},
		},
	}
	if _, err := cs.AppsV1().Deployments(o.namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("deployment: %w", err)
	}
	return nil
}

func service(name, clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			ClusterIP: clusterIP,
			Selector:  map[string]string{"app": app},
			Ports:     []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}
}

// createPods creates pods burst-0 … burst-(count-1), unscheduled, from
// o.clients goroutines.
func createPods(ctx context.Context, cs kubernetes.Interface, o *options) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.clients)
	for range o.clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= o.count || ctx.Err() != nil {
					return
				}
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", app, i), Labels: map[string]string{"app": app}}, Spec: podSpec()}
				if _, err := cs.CoreV1().Pods(o.namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("pod %s: %w", p.Name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

type tally struct {
	pods, bound, running int
	endpoints            map[string]int // ready addresses by Service
}

func counts(pods podLister, eps sliceLister) tally {
	var t tally
	ps, _ := pods.List(labels.SelectorFromSet(labels.Set{"app": app}))
	for _, p := range ps {
		t.pods++
		if p.Spec.NodeName != "" {
			t.bound++
		}
		if p.Status.Phase == corev1.PodRunning {
			t.running++
		}
	}
	t.endpoints = map[string]int{}
	ss, _ := eps.List(labels.Everything())
	for _, s := range ss {
		svc := s.Labels[discoveryv1.LabelServiceName]
		for _, e := range s.Endpoints {
			// A nil ready is ready (discovery/v1 EndpointConditions).
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				t.endpoints[svc] += len(e.Addresses)
			}
		}
	}
	return t
}

type podLister interface {
	List(labels.Selector) ([]*corev1.Pod, error)
}

type sliceLister interface {
	List(labels.Selector) ([]*discoveryv1.EndpointSlice, error)
}

func progress(pods podLister, eps sliceLister, o *options) string {
	c := counts(pods, eps)
	return fmt.Sprintf("of %d: %d pods, %d bound, %d running, %d and %d ready endpoints (headless, ClusterIP)",
		o.count, c.pods, c.bound, c.running, c.endpoints[headless], c.endpoints[clusterIPSvc])
}

// pollDNS asks o.dns over TCP for the headless Service's A records every
// 200 ms and sends the time since start once they are o.count distinct
// addresses. TCP, because 1,000 A records do not fit a UDP reply.
func pollDNS(ctx context.Context, o *options, start time.Time, resolved chan<- time.Duration) {
	name := dns.Fqdn(fmt.Sprintf("%s.%s.svc.%s", headless, o.namespace, o.domain))
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	last := -1
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		r, _, err := c.ExchangeContext(ctx, m, o.dns)
		if err == nil {
			ips := map[string]bool{}
			for _, rr := range r.Answer {
				if a, ok := rr.(*dns.A); ok {
					ips[net.IP.String(a.A)] = true
				}
			}
			last = len(ips)
			if last >= o.count {
				resolved <- time.Since(start)
				return
			}
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(os.Stderr, "burst: %s: last answer had %d addresses (error %v)\n", name, last, err)
			return
		case <-t.C:
		}
	}
}

// requestTotals is the API server's apiserver_request_total summed by
// verb, resource (with its group) and subresource, with the code in the
// verb of a request that did not succeed.
func requestTotals(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	b, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading /metrics: %w", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	out := map[string]float64{}
	fam, ok := fams["apiserver_request_total"]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		verb := l["verb"]
		// Failed requests (409 conflicts, 429 over the in-flight limit,
		// …) are rows of their own: they are retries, not work done.
		if c := l["code"]; c != "" && c[0] != '2' {
			verb += "(" + c + ")"
		}
		out[requestKey(verb, l["group"], l["resource"], l["subresource"])] += m.GetCounter().GetValue()
	}
	return out, nil
}

// requestKey is "VERB RESOURCE[.GROUP] SUBRESOURCE", "-" for an empty
// field: events and events.events.k8s.io are different writers (the agent
// and the scheduler), so the group is kept.
func requestKey(verb, group, resource, sub string) string {
	dash := func(s string) string { return cmp.Or(s, "-") }
	if group != "" && resource != "" {
		resource += "." + group
	}
	return dash(verb) + " " + dash(resource) + " " + dash(sub)
}

// printRequests writes `requests total - - X` and then `requests VERB
// RESOURCE SUBRESOURCE X` by X descending, X the requests per pod.
func printRequests(before, after map[string]float64, n int) {
	type row struct {
		key string
		d   float64
	}
	var rows []row
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			rows = append(rows, row{k, d})
			total += d
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(b.d, a.d), cmp.Compare(a.key, b.key)) })
	fmt.Printf("requests total - - %.3f\n", total/float64(n))
	for _, r := range rows {
		fmt.Printf("requests %s %.3f\n", r.key, r.d/float64(n))
	}
}
