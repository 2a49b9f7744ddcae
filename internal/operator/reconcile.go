package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorlisters "github.com/dnsplane/dnsplane/api/client/listers/operator/v1"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// Checker dry-loads a Corefile: nil when CoreDNS would load it. The
// operator publishes no Corefile that fails it. coredns.DryLoad cannot run
// in a process that serves CoreDNS, so the checker of `dnsplane operator`
// and `up` runs it in a child process (ExecChecker).
type Checker interface {
	Check(ctx context.Context, corefile []byte) error
}

// PodCounter reports the cluster DNS instances that do not run as the
// DaemonSet's pods (the in-process cluster DNS of `dnsplane up`): how many
// there are, how many serve the Corefile with hash corefileHash, how many
// serve at all.
type PodCounter interface {
	Pods(corefileHash string) Pods
}

// Config configures the operator.
type Config struct {
	// ServiceRange is the service cluster IP range; the Service gets its
	// 10th address unless ServiceIP is set.
	ServiceRange *net.IPNet
	// ServiceIP is the cluster DNS Service's address, inside ServiceRange;
	// nil means the 10th address. On clusters whose kube-dns already holds
	// the 10th (kubeadm, kind, k3s) the operator's Service needs another
	// (docs/kubernetes.md, "Values").
	ServiceIP net.IP
	// Render are the renderer's options; Render.ClusterDomain is the
	// cluster domain reported in the status.
	Render render.Options
	// Checker dry-loads rendered Corefiles; required.
	Checker Checker
	// Image is the DaemonSet's image; empty means DefaultImage.
	Image string
	// Instances, when set, replaces the DaemonSet: the operator manages
	// none, and the conditions follow the instances it reports.
	Instances PodCounter
	// Health, when set, reads the cluster DNS instances' forward
	// health-check counters every HealthInterval into status.upstreams
	// and the UpstreamsAvailable condition.
	Health HealthSource
	// ScrapePods, when Health is nil, scrapes the metrics endpoints of
	// the DaemonSet's running pods (port 9153).
	ScrapePods bool
	// Recorder, when set, receives the DNS object's events
	// (CorefilePublished, CorefileRejected, ForwarderSkipped); the
	// Controller sets one writing to the core v1 events API.
	Recorder record.EventRecorder
	// HealthInterval is how often Health is read; 0 means
	// DefaultHealthInterval.
	HealthInterval time.Duration
	Logger         *slog.Logger
}

// DefaultHealthInterval is how often the forward health is read by
// default.
const DefaultHealthInterval = 10 * time.Second

// Listers are the informer caches the Reconciler reads.
type Listers struct {
	DNS        operatorlisters.DNSLister
	ConfigMaps corelisters.ConfigMapLister
	Services   corelisters.ServiceLister
	DaemonSets appslisters.DaemonSetLister
}

// Reconciler brings the managed objects and the DNS status to what the
// DNS "default" asks for. Reads come from the informer caches, so a
// resync with no change costs no request and writes nothing.
type Reconciler struct {
	cfg     Config
	kube    kubernetes.Interface
	dns     versioned.Interface
	listers Listers
	log     *slog.Logger
	now     func() time.Time
	// recheck is when the last pass's status is due again (a condition
	// change held back by flapTolerance), 0 for never; the controller's
	// one worker reads it after Reconcile (RecheckAfter).
	recheck atomic.Int64 // a time.Duration

	mu sync.Mutex
	// rejected remembers the last Corefile that failed the dry load, so
	// a resync does not run the checker again for the same text.
	rejected    []byte
	rejectedErr error

	// health follows the forward health of the nameservers; nil without
	// a HealthSource.
	health *healthTracker

	// skipped are the parts left out at the last pass, so that an event
	// is recorded when one is first left out, not at every resync.
	skipped map[string]bool
	// shared are the reverse zone notes of the last pass, for the same
	// reason.
	shared map[string]bool
	// dryLoadFailing is true while dry loads give no verdict, so that
	// one DryLoadFailed event is recorded per streak of failures.
	dryLoadFailing bool
	// tooLarge is the last Corefile whose ConfigMap was too large (one
	// CorefileTooLarge event per text); statusTrimmed whether the last
	// status was trimmed to fit (one StatusTooLarge event per streak).
	tooLarge      []byte
	statusTrimmed bool
}

// The reasons of the events recorded on the DNS object.
const (
	EventCorefilePublished = "CorefilePublished"
	EventCorefileRejected  = "CorefileRejected"
	EventForwarderSkipped  = "ForwarderSkipped"
	// EventReverseZoneShared: a forward plugin's domain covers reverse
	// names of the cluster, which the cluster DNS keeps answering.
	EventReverseZoneShared = "ReverseZoneShared"
	// EventDryLoadFailed: the dry load gave no verdict (the child could
	// not start, was killed or timed out); retried with backoff.
	EventDryLoadFailed = "DryLoadFailed"
	// EventCorefileTooLarge: the ConfigMap with the rendered Corefile
	// (and its CA bundles) is over the API's size limit.
	EventCorefileTooLarge = "CorefileTooLarge"
	// EventStatusTooLarge: status.upstreams was cut to keep the DNS
	// object within the API's size limit.
	EventStatusTooLarge = "StatusTooLarge"
)

// event records an event on dns when there is a recorder.
func (r *Reconciler) event(dns *operatorv1.DNS, typ, reason, msg string) {
	if r.cfg.Recorder != nil {
		r.cfg.Recorder.Event(dns, typ, reason, msg)
	}
}

// recordSkipped records a ForwarderSkipped event per part newly left out.
func (r *Reconciler) recordSkipped(dns *operatorv1.DNS, skipped []render.Skipped) {
	r.mu.Lock()
	prev := r.skipped
	r.skipped = map[string]bool{}
	for _, s := range skipped {
		r.skipped[s.String()] = true
	}
	r.mu.Unlock()
	for _, s := range skipped {
		if !prev[s.String()] {
			r.event(dns, corev1.EventTypeWarning, EventForwarderSkipped, s.String())
		}
	}
}

// recordShared records a ReverseZoneShared event per note newly true
// (render.SharedReverseZones): nothing is wrong, but the forward plugin
// does not get every name of its domain.
func (r *Reconciler) recordShared(dns *operatorv1.DNS, notes []string) {
	r.mu.Lock()
	prev := r.shared
	r.shared = map[string]bool{}
	for _, n := range notes {
		r.shared[n] = true
	}
	r.mu.Unlock()
	for _, n := range notes {
		if !prev[n] {
			r.event(dns, corev1.EventTypeNormal, EventReverseZoneShared, n)
		}
	}
}

// NewReconciler returns a Reconciler writing with kube and dns.
func NewReconciler(cfg Config, kube kubernetes.Interface, dns versioned.Interface, l Listers) (*Reconciler, error) {
	if cfg.ServiceRange == nil {
		return nil, errors.New("operator: the service range is required")
	}
	if cfg.Checker == nil {
		return nil, errors.New("operator: a Corefile checker is required")
	}
	if cfg.ServiceIP == nil {
		ip, err := ServiceIP(cfg.ServiceRange)
		if err != nil {
			return nil, err
		}
		cfg.ServiceIP = ip
	} else if !cfg.ServiceRange.Contains(cfg.ServiceIP) {
		return nil, fmt.Errorf("operator: the cluster DNS Service address %s is outside the service range %s", cfg.ServiceIP, cfg.ServiceRange)
	}
	a, ok := netip.AddrFromSlice(cfg.ServiceIP)
	if !ok {
		return nil, fmt.Errorf("operator: the cluster DNS Service address %q is not an IP address", cfg.ServiceIP)
	}
	svc := netip.AddrPortFrom(a.Unmap(), dnsspec.DNSPort)
	// A forwarder naming the cluster DNS Service's address sends its
	// queries back to the cluster DNS: the renderer leaves it out and the
	// status says why (dnsspec.ValidateNotOwn).
	cfg.Render.OwnAddresses = append(slices.Clip(cfg.Render.OwnAddresses), svc)
	if cfg.Image == "" {
		cfg.Image = DefaultImage
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.HealthInterval <= 0 {
		cfg.HealthInterval = DefaultHealthInterval
	}
	rec := &Reconciler{cfg: cfg, kube: kube, dns: dns, listers: l, log: log, now: time.Now}
	if cfg.Health != nil || cfg.ScrapePods {
		rec.health = newHealthTracker()
	}
	return rec, nil
}

// RecheckAfter is how soon the last Reconcile wants to run again, 0 for
// only on the next change: a condition transition it held back.
func (r *Reconciler) RecheckAfter() time.Duration { return time.Duration(r.recheck.Load()) }

// Reconcile runs one pass for the DNS "default".
func (r *Reconciler) Reconcile(ctx context.Context) error {
	r.recheck.Store(0)
	dns, err := r.listers.DNS.Get(operatorv1.DefaultName)
	if apierrors.IsNotFound(err) {
		// The API server applies the spec's defaults; the informer
		// brings the new object back for the next pass.
		_, err := r.dns.OperatorV1().DNSes().Create(ctx, &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.DefaultName}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating DNS %s: %w", operatorv1.DefaultName, err)
		}
		r.log.Info("created DNS with defaults", "name", operatorv1.DefaultName)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading DNS %s: %w", operatorv1.DefaultName, err)
	}

	ro := r.cfg.Render
	ro.CABundles = r.caBundles(&dns.Spec)
	rendered, skipped, err := render.Corefile(&dns.Spec, ro)
	if err != nil {
		return fmt.Errorf("rendering the Corefile: %w", err)
	}
	obs := observed{skipped: skipped, unmanaged: dns.Spec.ManagementState == operatorv1.Unmanaged}
	r.recordSkipped(dns, skipped)
	r.recordShared(dns, render.SharedReverseZones(&dns.Spec, ro))

	published := r.publishedCorefile()
	// retry is a dry load that gave no verdict: the status says so, and
	// the controller retries the pass with backoff.
	var retry *DryLoadError
	if !obs.unmanaged {
		var res publishResult
		if res, err = r.ensureCorefile(ctx, dns, &dns.Spec, ro, rendered, published); err != nil {
			return err
		}
		published, obs.rejected, obs.tooLarge = res.published, res.rejected, res.tooLarge
		if res.dryLoad != nil {
			obs.dryLoadFailed, retry = res.dryLoad.Error(), res.dryLoad
		}
		if obs.rejected != "" || obs.tooLarge != "" {
			// Nothing was ever published and the spec's Corefile does
			// not load or cannot be stored: serve the default spec's
			// rather than nothing (a DaemonSet without a Corefile, an
			// `up` waiting forever), and keep saying why in Degraded.
			// The default spec names no CA bundle: none is copied.
			dro := ro
			dro.CABundles = map[string]string{}
			def, _, err := render.Corefile(&operatorv1.DNSSpec{}, dro)
			if err != nil {
				return fmt.Errorf("rendering the default Corefile: %w", err)
			}
			if published == nil {
				res, err := r.ensureCorefile(ctx, dns, &operatorv1.DNSSpec{}, dro, def, nil)
				if err != nil {
					return err
				}
				published = res.published
				switch {
				case res.dryLoad != nil:
					obs.dryLoadFailed, retry = res.dryLoad.Error(), res.dryLoad
				case published == nil && obs.rejected != "":
					obs.rejected += "; the default Corefile does not load either: " + res.rejected
				case published == nil:
					obs.tooLarge += "; the default Corefile does not load: " + res.rejected
				}
			}
			obs.fallback = published != nil && string(published) == string(def)
		}
		r.recordDryLoad(dns, rendered, retry)
		if err := r.ensureService(ctx, r.cfg.ServiceIP.String()); err != nil {
			return err
		}
		if r.cfg.Instances == nil && published != nil {
			if err := r.ensureDaemonSet(ctx, CorefileHash(published)); err != nil {
				return err
			}
		}
	}

	if r.health != nil {
		now := metav1.NewTime(r.now().Truncate(time.Second))
		obs.upstreams = upstreamStatuses(PublishedForwarders(published), r.health.snapshot(), dns.Status.Upstreams, now)
		obs.healthWatched = true
	}
	obs.service, _ = r.listers.Services.Services(Namespace).Get(Name)
	if r.cfg.Instances != nil {
		if published != nil {
			p := r.cfg.Instances.Pods(CorefileHash(published))
			obs.pods = &p
		}
	} else if ds, err := r.listers.DaemonSets.DaemonSets(Namespace).Get(Name); err == nil {
		p := podsOf(ds)
		obs.pods = &p
	}
	if err := r.ensureStatus(ctx, dns, obs); err != nil {
		return err
	}
	if retry != nil {
		return retry
	}
	return nil
}

// recordDryLoad records a DryLoadFailed event when dry loads start
// failing without a verdict (not at every retry: the controller retries
// with backoff), and forgets the failure once one gives a verdict.
func (r *Reconciler) recordDryLoad(dns *operatorv1.DNS, rendered []byte, failed *DryLoadError) {
	r.mu.Lock()
	was := r.dryLoadFailing
	r.dryLoadFailing = failed != nil
	r.mu.Unlock()
	if failed != nil && !was {
		r.log.Error("the Corefile dry load did not run; retrying with backoff", "hash", CorefileHash(rendered), "err", failed)
		r.event(dns, corev1.EventTypeWarning, EventDryLoadFailed,
			fmt.Sprintf("The rendered Corefile (hash %s) was not published: %v; retrying with backoff.", CorefileHash(rendered), failed))
	}
}

// publishedCorefile is the Corefile in the ConfigMap, nil when none.
func (r *Reconciler) publishedCorefile() []byte {
	cm, err := r.listers.ConfigMaps.ConfigMaps(Namespace).Get(Name)
	if err != nil {
		return nil
	}
	text, ok := cm.Data[CorefileKey]
	if !ok {
		return nil
	}
	return []byte(text)
}

// publishResult is what ensureCorefile did with a rendered Corefile.
type publishResult struct {
	// published is the Corefile published afterwards, nil when none.
	published []byte
	// rejected is why the rendered Corefile does not load, "" when it
	// loads or the dry load gave no verdict.
	rejected string
	// dryLoad is a dry load that gave no verdict (retried with backoff).
	dryLoad *DryLoadError
	// tooLarge is why the ConfigMap with the rendered Corefile cannot be
	// stored (its size), "" when it fits.
	tooLarge string
}

// ensureCorefile publishes rendered unless it is published already, fails
// the dry load, gets no verdict from it, or would not fit in a ConfigMap.
func (r *Reconciler) ensureCorefile(ctx context.Context, dns *operatorv1.DNS, spec *operatorv1.DNSSpec, ro render.Options, rendered, published []byte) (publishResult, error) {
	if string(rendered) == string(published) {
		return publishResult{published: published}, nil
	}
	want := desiredConfigMap(rendered, ro.CABundles)
	if msg := configMapTooLarge(want); msg != "" {
		// No retry can store it: only a smaller spec or CA bundle will.
		r.recordTooLarge(dns, rendered, msg)
		return publishResult{published: published, tooLarge: msg}, nil
	}
	if fresh, err := r.check(ctx, spec, ro, rendered); err != nil {
		if ctx.Err() != nil {
			return publishResult{}, fmt.Errorf("checking the Corefile: %w", err)
		}
		var dle *DryLoadError
		if !IsCorefileError(err) {
			if !errors.As(err, &dle) {
				dle = &DryLoadError{Err: err}
			}
			return publishResult{published: published, dryLoad: dle}, nil
		}
		if fresh {
			r.log.Error("rendered Corefile does not load; keeping the published one", "err", err)
			r.event(dns, corev1.EventTypeWarning, EventCorefileRejected,
				fmt.Sprintf("The rendered Corefile (hash %s) does not load and was not published: %v", CorefileHash(rendered), err))
		}
		return publishResult{published: published, rejected: err.Error()}, nil
	}
	if err := r.ensureNamespace(ctx); err != nil {
		return publishResult{}, err
	}
	cms := r.kube.CoreV1().ConfigMaps(Namespace)
	cur, err := r.listers.ConfigMaps.ConfigMaps(Namespace).Get(Name)
	switch {
	case apierrors.IsNotFound(err):
		_, err = cms.Create(ctx, want, metav1.CreateOptions{})
		err = wrapWrite(err, "creating")
	case err != nil:
		return publishResult{}, fmt.Errorf("reading ConfigMap %s/%s: %w", Namespace, Name, err)
	default:
		next := cur.DeepCopy()
		next.Labels = mergeLabels(next.Labels, want.Labels)
		next.Data = want.Data
		_, err = cms.Update(ctx, next, metav1.UpdateOptions{})
		err = wrapWrite(err, "updating")
	}
	if apierrors.IsRequestEntityTooLargeError(err) {
		// A limit configMapTooLarge does not know (the API server's or
		// etcd's request size, lowered by flags): the same write fails
		// every time.
		msg := err.Error()
		r.recordTooLarge(dns, rendered, msg)
		return publishResult{published: published, tooLarge: msg}, nil
	}
	if err != nil {
		return publishResult{}, err
	}
	r.log.Info("published Corefile", "configmap", Namespace+"/"+Name, "hash", CorefileHash(rendered))
	r.event(dns, corev1.EventTypeNormal, EventCorefilePublished,
		fmt.Sprintf("Published the Corefile (hash %s) in ConfigMap %s/%s.", CorefileHash(rendered), Namespace, Name))
	return publishResult{published: rendered}, nil
}

func wrapWrite(err error, verb string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s ConfigMap %s/%s: %w", verb, Namespace, Name, err)
}

// recordTooLarge records a CorefileTooLarge event once per Corefile text.
func (r *Reconciler) recordTooLarge(dns *operatorv1.DNS, rendered []byte, msg string) {
	r.mu.Lock()
	fresh := string(r.tooLarge) != string(rendered)
	r.tooLarge = rendered
	r.mu.Unlock()
	if fresh {
		r.log.Error("the rendered Corefile does not fit in its ConfigMap; keeping the published one", "hash", CorefileHash(rendered), "reason", msg)
		r.event(dns, corev1.EventTypeWarning, EventCorefileTooLarge,
			fmt.Sprintf("The rendered Corefile (hash %s) was not published: %s", CorefileHash(rendered), msg))
	}
}

// check runs the checker unless corefile is the one it last rejected.
// The CA bundles are not where the cluster DNS will read them (the
// DaemonSet's mount), so a Corefile with bundles is dry-loaded as
// rendered with them in a temporary directory: the same Corefile but
// for the paths of the tls lines.
// fresh is false when the error is the remembered one.
func (r *Reconciler) check(ctx context.Context, spec *operatorv1.DNSSpec, ro render.Options, corefile []byte) (fresh bool, err error) {
	r.mu.Lock()
	if r.rejected != nil && string(r.rejected) == string(corefile) {
		err := r.rejectedErr
		r.mu.Unlock()
		return false, err
	}
	r.mu.Unlock()
	// The cluster DNS pods read the API with their service account, which
	// the operator's process has (in a cluster) or not (run from a shell
	// with --kubeconfig): the Corefile is checked with the kubernetes
	// plugin pointed at the same API server by address instead, so that
	// the verdict, and so what is published, does not depend on where
	// the operator runs.
	checked := corefile
	if ro.Kubeconfig == "" {
		ro.NoServiceAccount = true
	}
	if len(ro.CABundles) > 0 {
		dir, err := os.MkdirTemp("", "dnsplane-ca-bundles-")
		if err != nil {
			return true, &DryLoadError{Err: fmt.Errorf("writing the CA bundles for the dry load: %w", err)}
		}
		defer os.RemoveAll(dir)
		for name, pem := range ro.CABundles {
			if err := os.WriteFile(filepath.Join(dir, render.CABundleFile(name)), []byte(pem), 0o600); err != nil {
				return true, &DryLoadError{Err: fmt.Errorf("writing the CA bundles for the dry load: %w", err)}
			}
		}
		ro.CABundleDir = dir
	}
	if ro.NoServiceAccount || len(ro.CABundles) > 0 {
		if checked, _, err = render.Corefile(spec, ro); err != nil {
			return true, fmt.Errorf("checking the Corefile: %w", err)
		}
	}
	err = r.cfg.Checker.Check(ctx, checked)
	// Only a verdict on the Corefile is remembered: a dry load that did
	// not run says nothing about the text, and is retried.
	if IsCorefileError(err) && ctx.Err() == nil {
		r.mu.Lock()
		r.rejected, r.rejectedErr = corefile, err
		r.mu.Unlock()
	}
	return true, err
}

func (r *Reconciler) ensureNamespace(ctx context.Context) error {
	_, err := r.kube.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = r.kube.CoreV1().Namespaces().Create(ctx, desiredNamespace(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("ensuring namespace %s: %w", Namespace, err)
	}
	return nil
}

func (r *Reconciler) ensureService(ctx context.Context, clusterIP string) error {
	want := desiredService(clusterIP)
	svcs := r.kube.CoreV1().Services(Namespace)
	cur, err := r.listers.Services.Services(Namespace).Get(Name)
	if apierrors.IsNotFound(err) {
		if err := r.ensureNamespace(ctx); err != nil {
			return err
		}
		if _, err := svcs.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Service %s/%s: %w", Namespace, Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Service %s/%s: %w", Namespace, Name, err)
	}
	if cur.Spec.ClusterIP != clusterIP {
		// The cluster IP is immutable: the Service has to be recreated.
		if err := svcs.Delete(ctx, Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("recreating Service %s/%s for cluster IP %s: %w", Namespace, Name, clusterIP, err)
		}
		if _, err := svcs.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("recreating Service %s/%s: %w", Namespace, Name, err)
		}
		return nil
	}
	if equality.Semantic.DeepEqual(cur.Spec.Ports, want.Spec.Ports) &&
		equality.Semantic.DeepEqual(cur.Spec.Selector, want.Spec.Selector) && hasLabels(cur.Labels, want.Labels) {
		return nil
	}
	next := cur.DeepCopy()
	next.Labels = mergeLabels(next.Labels, want.Labels)
	next.Spec.Ports, next.Spec.Selector = want.Spec.Ports, want.Spec.Selector
	if _, err := svcs.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating Service %s/%s: %w", Namespace, Name, err)
	}
	return nil
}

func (r *Reconciler) ensureDaemonSet(ctx context.Context, hash string) error {
	want := desiredDaemonSet(r.cfg.Image, hash)
	dss := r.kube.AppsV1().DaemonSets(Namespace)
	cur, err := r.listers.DaemonSets.DaemonSets(Namespace).Get(Name)
	if apierrors.IsNotFound(err) {
		if _, err := dss.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating DaemonSet %s/%s: %w", Namespace, Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading DaemonSet %s/%s: %w", Namespace, Name, err)
	}
	if !daemonSetChanged(cur, want) {
		return nil
	}
	next := cur.DeepCopy()
	next.Labels = mergeLabels(next.Labels, want.Labels)
	next.Spec.Selector = want.Spec.Selector
	next.Spec.MinReadySeconds = want.Spec.MinReadySeconds
	next.Spec.UpdateStrategy = want.Spec.UpdateStrategy
	next.Spec.Template = want.Spec.Template
	_, err = dss.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("updating DaemonSet %s/%s: %w", Namespace, Name, err)
	}
	r.log.Info("updated DaemonSet; its pods roll", "daemonset", Namespace+"/"+Name, "corefileHash", hash)
	return nil
}

// daemonSetChanged compares only what the operator sets: the API server
// defaults the rest of the pod template (restart policy, termination
// grace, probe thresholds), which must not count as a change.
func daemonSetChanged(cur, want *appsv1.DaemonSet) bool {
	ct, wt := cur.Spec.Template, want.Spec.Template
	if !hasLabels(cur.Labels, want.Labels) || !hasLabels(ct.Labels, wt.Labels) ||
		ct.Annotations[CorefileHashAnnotation] != wt.Annotations[CorefileHashAnnotation] ||
		cur.Spec.MinReadySeconds != want.Spec.MinReadySeconds ||
		ct.Spec.ServiceAccountName != wt.Spec.ServiceAccountName ||
		len(ct.Spec.Containers) != len(wt.Spec.Containers) {
		return true
	}
	for i, c := range ct.Spec.Containers {
		w := wt.Spec.Containers[i]
		if c.Name != w.Name || c.Image != w.Image || !equality.Semantic.DeepEqual(c.Args, w.Args) ||
			!equality.Semantic.DeepEqual(c.VolumeMounts, w.VolumeMounts) {
			return true
		}
	}
	return !equality.Semantic.DeepEqual(ct.Spec.NodeSelector, wt.Spec.NodeSelector) ||
		len(ct.Spec.Volumes) != len(wt.Spec.Volumes)
}

func (r *Reconciler) ensureStatus(ctx context.Context, dns *operatorv1.DNS, o observed) error {
	want, recheck := desiredStatus(dns, dnsspec.ClusterDomain(r.cfg.Render.ClusterDomain), o, metav1.NewTime(r.now().Truncate(time.Second)))
	r.recheck.Store(int64(recheck))
	next := dns.DeepCopy()
	next.Status = want
	trimmed := fitStatus(next)
	r.mu.Lock()
	was := r.statusTrimmed
	r.statusTrimmed = trimmed != ""
	r.mu.Unlock()
	if trimmed != "" && !was {
		r.log.Warn("the DNS status does not fit the API's object size limit; listing fewer upstreams", "note", trimmed)
		r.event(dns, corev1.EventTypeWarning, EventStatusTooLarge, trimmed)
	}
	if statusEqual(dns.Status, next.Status) {
		return nil
	}
	if _, err := r.dns.OperatorV1().DNSes().UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating DNS %s status: %w", dns.Name, err)
	}
	return nil
}

// caBundles are the CA bundles the spec's TLS forwarders name that exist
// (ConfigMaps of the operator's namespace with key ca-bundle.crt), by
// name; never nil, so that the renderer leaves out the forwarders whose
// bundle is missing.
func (r *Reconciler) caBundles(spec *operatorv1.DNSSpec) map[string]string {
	out := map[string]string{}
	add := func(tc *operatorv1.DNSTransportConfig) {
		if tc == nil || tc.TLS == nil || tc.TLS.CABundle == nil || tc.TLS.CABundle.Name == "" {
			return
		}
		name := tc.TLS.CABundle.Name
		if name == Name { // the operator's own ConfigMap holds no bundle
			return
		}
		cm, err := r.listers.ConfigMaps.ConfigMaps(Namespace).Get(name)
		if err != nil {
			return
		}
		if pem, ok := cm.Data[render.CABundleKey]; ok && pem != "" {
			out[name] = pem
		}
	}
	for _, fp := range spec.PluginConfig.ForwardPlugins {
		add(fp.TransportConfig)
	}
	add(spec.UpstreamResolvers.TransportConfig)
	return out
}

// ScrapeHealth reads the forward health once and reports whether a
// nameserver's health changed (then a pass writes the status).
func (r *Reconciler) ScrapeHealth(ctx context.Context, src HealthSource) (bool, error) {
	counts, err := src.Scrape(ctx)
	if err != nil {
		return false, err
	}
	return r.health.observe(r.now(), counts), nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func mergeLabels(have, want map[string]string) map[string]string {
	out := maps.Clone(have)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, want)
	return out
}
