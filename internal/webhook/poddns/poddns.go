// Package poddns turns the pod DNS policies dnsplane adds (dnsPolicy Custom
// and ClusterFirstWithAutopath, docs/pod-dns.md and docs/autopath.md) into
// what a stock kubelet understands: dnsPolicy None plus the dnsConfig that
// makes kubelet write the resolv.conf dnsplane's agent would write. It also
// validates them with the rules and field paths of dnsplane's API server.
//
// A stock kube-apiserver refuses the two policy values at its own
// validation, after admission, and drops spec.dnsParams when it decodes, so
// users carry the parameters in the annotation dnsplane's API server already
// mirrors them into (internal/dnsparams.Annotation) and the mutating webhook
// rewrites the spec before the server validates it. The requested policy is
// kept in PolicyAnnotation on the same metadata, so pods made from a
// rewritten template are recognised and recomputed at their own admission.
package poddns

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// PolicyAnnotation records, on the metadata that goes with a pod spec, the
// policy the webhook rewrote into dnsPolicy None: Custom or
// ClusterFirstWithAutopath.
const PolicyAnnotation = "pod.dnsplane.io/dns-policy"

// ParamsAnnotation is where users write spec.dnsParams on a stock cluster:
// the annotation dnsplane's own API server mirrors the field into.
const ParamsAnnotation = dnsparams.Annotation

// Policies are the values PolicyAnnotation may hold.
func Policies() []corev1.DNSPolicy {
	return []corev1.DNSPolicy{dpcorev1.DNSCustom, dpcorev1.DNSClusterFirstWithAutopath}
}

// Cluster is what the webhook knows of the cluster's kubelets and DNS, from
// its flags: the admission-time stand-in for the node the agent reads.
type Cluster struct {
	ClusterDNS    []string // kubelet's --cluster-dns
	ClusterDomain string   // kubelet's --cluster-domain
	NodeCache     []string // the node cache's link-local addresses
	// HostSearch is what $(HOST) expands to. A pod's node is unknown at
	// admission, so the node's own search list cannot be read; the cluster
	// operator states the list every node has (empty on stock images,
	// whose kubelet --resolv-conf has no search line for pods to inherit).
	HostSearch []string
}

// Node is the resolvconf.Node the rewrite computes with, so the webhook runs
// the agent's own code (resolvconf.ForPod) rather than a copy of its rules.
//
// Autopath pods get the node cache and then the cluster DNS: the node cache
// is a DaemonSet that is briefly down on every rolling upgrade, and the
// cluster DNS understands the autopath name without the cache's option,
// expanding it with the cluster paths (docs/autopath.md). dnsplane up gives
// its agents the same list, node cache first (its --cluster-dns is
// "node cache, cluster DNS"), so both write the same nameservers.
func (c Cluster) Node() resolvconf.Node {
	return resolvconf.Node{
		ClusterDomain:  c.ClusterDomain,
		ClusterDNS:     slices.Clone(c.ClusterDNS),
		NodeCache:      append(slices.Clone(c.NodeCache), c.ClusterDNS...),
		HostResolvConf: true,
		Host:           resolvconf.Config{Searches: slices.Clone(c.HostSearch)},
	}
}

// Requested is the dnsplane policy a pod spec asks for: its dnsPolicy when
// that is one of them, else the PolicyAnnotation of an already rewritten
// spec (dnsPolicy None). ok is false for every other spec.
func Requested(at api.PodSpecAt) (policy corev1.DNSPolicy, ok bool) {
	switch p := at.Spec.DNSPolicy; p {
	case dpcorev1.DNSCustom, dpcorev1.DNSClusterFirstWithAutopath:
		return p, true
	case corev1.DNSNone:
		if p, ok := at.Meta.Annotations[PolicyAnnotation]; ok && slices.Contains(Policies(), corev1.DNSPolicy(p)) {
			return corev1.DNSPolicy(p), true
		}
	}
	return "", false
}

// rewritten reports whether at is a spec this webhook wrote: dnsPolicy None
// with a policy recorded.
func rewritten(at *api.PodSpecAt) bool {
	if at == nil || at.Spec.DNSPolicy != corev1.DNSNone {
		return false
	}
	_, ok := Requested(*at)
	return ok
}

// Restore puts the spec back the way dnsplane's API server would hold it:
// the requested policy in dnsPolicy and spec.dnsParams decoded from the
// annotation, so validation and resolvconf.ForPod see what they see there.
// An annotation that does not decode leaves dnsParams nil; validation
// reports it (validation.ValidateDNSParamsAnnotation).
func Restore(at api.PodSpecAt) {
	policy, ok := Requested(at)
	if !ok {
		return
	}
	at.Spec.DNSPolicy = policy
	if policy != dpcorev1.DNSCustom || at.Spec.DNSParams != nil {
		return
	}
	if v, ok := at.Meta.Annotations[ParamsAnnotation]; ok {
		if p, err := dnsparams.Decode(v); err == nil {
			at.Spec.DNSParams = p
		}
	}
}

// Result is what Rewrite did to one pod spec.
type Result struct {
	Changed  bool
	Warnings []string // resolvconf's events, as admission warnings
}

// Rewrite rewrites the pod spec at (inside an object in namespace) into
// dnsPolicy None and the dnsConfig resolvconf.ForPod computes for the
// requested policy on cluster's node. prev is the same spec in the stored
// object on update, nil on create.
//
// The user's own spec.dnsConfig is merged by ForPod as for every policy, so
// after a rewrite dnsConfig holds policy output and user entries together.
// To recompute (a pod made from a rewritten template, a template whose
// parameters changed) the policy's own entries are taken out again, those
// of the parameters that produced the stored dnsConfig, before ForPod runs
// with the current ones: recomputing the same parameters is idempotent and
// new parameters replace, rather than add to, the old search list.
func Rewrite(at api.PodSpecAt, prev *api.PodSpecAt, namespace string, cluster Cluster) (Result, error) {
	node := cluster.Node()
	policy, ok := Requested(at)
	if !ok {
		return leave(at, prev, namespace, node)
	}
	user := at.Spec.DNSConfig
	switch {
	case at.Spec.DNSPolicy == corev1.DNSNone:
		// Already rewritten. On update the stored spec says which
		// parameters made its dnsConfig; on create (a pod or a ReplicaSet
		// from a template) the parameters came along with it.
		b, err := policyBase(at, namespace, node)
		if rewritten(prev) {
			// The stored spec's parameters, unless they no longer
			// compute (the webhook's flags changed since).
			if pb, perr := policyBase(*prev, namespace, node); perr == nil {
				b, err = pb, nil
			}
		}
		if err != nil {
			return Result{}, err
		}
		user = subtract(user, b)
	case rewritten(prev) && equalDNSConfig(user, prev.Spec.DNSConfig):
		// A client-side apply that sets the policy back without touching
		// dnsConfig keeps the stored, merged one.
		b, err := policyBase(*prev, namespace, node)
		if err != nil {
			return Result{}, err
		}
		user = subtract(user, b)
	}
	pod := podFor(at, namespace, policy)
	pod.Spec.DNSConfig = user
	cfg, warnings, err := resolvconf.ForPod(pod, node)
	if err != nil {
		return Result{}, err
	}
	if len(cfg.Nameservers) == 0 {
		// The agent would fall back to the node's own nameservers, which
		// are unknown at admission, and kube-apiserver refuses dnsPolicy
		// None without one: say what is missing instead.
		return Result{}, fmt.Errorf("no nameserver for dnsPolicy %q: the webhook has no --cluster-dns (and no --node-cache for autopath)", policy)
	}
	before := at.Spec.DNSConfig.DeepCopy()
	beforePolicy := at.Spec.DNSPolicy
	at.Spec.DNSPolicy = corev1.DNSNone
	at.Spec.DNSConfig = toDNSConfig(cfg)
	at.Spec.DNSParams = nil
	changed := beforePolicy != corev1.DNSNone || !equalDNSConfig(before, at.Spec.DNSConfig)
	if at.Meta.Annotations[PolicyAnnotation] != string(policy) {
		setAnnotation(at, PolicyAnnotation, string(policy))
		changed = true
	}
	if policy != dpcorev1.DNSCustom {
		changed = dropAnnotation(at, ParamsAnnotation) || changed
	}
	res := Result{Changed: changed}
	for _, w := range warnings {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s: %s", at.Path, w.Reason, w.Message))
	}
	return res, nil
}

// leave handles a spec that asks for no dnsplane policy but still carries
// the webhook's marks, e.g. a template switched back to ClusterFirst by a
// client-side apply, which leaves annotations and fields it never set: the
// marks go, and so do the entries the old policy put into dnsConfig. The
// dnsParams annotation goes as on dnsplane's API server, which drops it
// from a spec whose policy is not Custom (docs/pod-dns.md).
func leave(at api.PodSpecAt, prev *api.PodSpecAt, namespace string, node resolvconf.Node) (Result, error) {
	changed := false
	if rewritten(prev) && at.Spec.DNSPolicy != corev1.DNSNone && equalDNSConfig(at.Spec.DNSConfig, prev.Spec.DNSConfig) {
		if b, err := policyBase(*prev, namespace, node); err == nil {
			at.Spec.DNSConfig = subtract(at.Spec.DNSConfig, b)
			changed = true
		}
	}
	changed = dropAnnotation(at, PolicyAnnotation) || changed
	changed = dropAnnotation(at, ParamsAnnotation) || changed
	return Result{Changed: changed}, nil
}

// podFor is the pod dnsplane's agent would see for the spec at: the
// requested policy with its parameters restored, in namespace.
func podFor(at api.PodSpecAt, namespace string, policy corev1.DNSPolicy) *dpcorev1.Pod {
	spec := *at.Spec
	spec.DNSPolicy = policy
	spec.DNSParams = nil
	meta := *at.Meta
	pod := &dpcorev1.Pod{Spec: spec}
	pod.Name, pod.Namespace, pod.Annotations = meta.Name, namespace, meta.Annotations
	Restore(api.PodSpecAt{Spec: &pod.Spec, Meta: &pod.ObjectMeta, Path: at.Path, MetaPath: at.MetaPath})
	return pod
}

// policyBase is the policy's own contribution for the spec at, without any
// dnsConfig merged.
func policyBase(at api.PodSpecAt, namespace string, node resolvconf.Node) (resolvconf.Config, error) {
	policy, _ := Requested(at)
	pod := podFor(at, namespace, policy)
	pod.Spec.DNSConfig = nil
	c, _, err := resolvconf.ForPod(pod, node)
	return c, err
}

// subtract is cfg without the entries base put there: what the user wrote.
// An option is the user's when its name or value differs from the base's.
func subtract(cfg *corev1.PodDNSConfig, base resolvconf.Config) *corev1.PodDNSConfig {
	if cfg == nil {
		return nil
	}
	out := &corev1.PodDNSConfig{}
	for _, s := range cfg.Nameservers {
		if !slices.Contains(base.Nameservers, s) {
			out.Nameservers = append(out.Nameservers, s)
		}
	}
	for _, s := range cfg.Searches {
		if !slices.Contains(base.Searches, s) {
			out.Searches = append(out.Searches, s)
		}
	}
	for _, o := range cfg.Options {
		if !slices.Contains(base.Options, optionString(o)) {
			out.Options = append(out.Options, *o.DeepCopy())
		}
	}
	if len(out.Nameservers) == 0 && len(out.Searches) == 0 && len(out.Options) == 0 {
		return nil
	}
	return out
}

func optionString(o corev1.PodDNSConfigOption) string {
	if o.Value == nil || *o.Value == "" {
		return o.Name
	}
	return o.Name + ":" + *o.Value
}

// toDNSConfig is the dnsConfig with which kubelet's None policy writes c:
// kubelet starts None pods from an empty config and appends dnsConfig, so
// the lists go through as they are and each option splits at its first
// colon, as kubelet's own option parsing does.
func toDNSConfig(c resolvconf.Config) *corev1.PodDNSConfig {
	out := &corev1.PodDNSConfig{
		Nameservers: slices.Clone(c.Nameservers),
		Searches:    slices.Clone(c.Searches),
	}
	for _, o := range c.Options {
		name, value, found := strings.Cut(o, ":")
		opt := corev1.PodDNSConfigOption{Name: name}
		if found && value != "" {
			opt.Value = &value
		}
		out.Options = append(out.Options, opt)
	}
	return out
}

func equalDNSConfig(a, b *corev1.PodDNSConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !slices.Equal(a.Nameservers, b.Nameservers) || !slices.Equal(a.Searches, b.Searches) || len(a.Options) != len(b.Options) {
		return false
	}
	for i := range a.Options {
		if optionString(a.Options[i]) != optionString(b.Options[i]) {
			return false
		}
	}
	return true
}

func setAnnotation(at api.PodSpecAt, key, value string) {
	if at.Meta.Annotations == nil {
		at.Meta.Annotations = map[string]string{}
	}
	at.Meta.Annotations[key] = value
}

func dropAnnotation(at api.PodSpecAt, key string) bool {
	if _, ok := at.Meta.Annotations[key]; !ok {
		return false
	}
	delete(at.Meta.Annotations, key)
	return true
}
