package operator

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// Pods are the counts of the cluster DNS's pods the conditions follow:
// a DaemonSet's status, or what an in-process cluster DNS reports.
type Pods struct {
	Desired, Updated, Available int32
}

// podsOf reads a DaemonSet's pod counts; a status the daemon controller
// has not caught up with yet counts as not updated.
func podsOf(ds *appsv1.DaemonSet) Pods {
	p := Pods{
		Desired:   ds.Status.DesiredNumberScheduled,
		Updated:   ds.Status.UpdatedNumberScheduled,
		Available: ds.Status.NumberAvailable,
	}
	if ds.Status.ObservedGeneration < ds.Generation {
		p.Updated = 0
	}
	return p
}

// observed is what the status is computed from.
type observed struct {
	service *corev1.Service // nil when missing
	pods    *Pods           // nil when there is no DaemonSet
	// skipped are the parts of the spec left out of the Corefile.
	skipped []render.Skipped
	// rejected is why the rendered Corefile was not published (it failed
	// the dry load), or "".
	rejected string
	// dryLoadFailed is why the rendered Corefile could not be checked
	// (the dry load gave no verdict), or "".
	dryLoadFailed string
	// tooLarge is why the rendered Corefile's ConfigMap cannot be stored
	// (its size), or "".
	tooLarge string
	// fallback is true when the default spec's Corefile is published
	// because the spec's was rejected before any was published.
	fallback bool
	// unmanaged is managementState Unmanaged.
	unmanaged bool
	// healthWatched is true when the operator reads the forward health;
	// upstreams is then every forwarded nameserver's.
	healthWatched bool
	upstreams     []operatorv1.UpstreamStatus
}

// flapTolerance holds back a False→True transition of Progressing, or of
// Degraded for rollout states, that comes this soon after the condition's
// last transition, as OpenShift's operator does (2× its 20s lameduck;
// Bug 2037190): a rollout that dips for a moment does not flap the
// conditions. The status is recomputed when the tolerance ends.
const flapTolerance = 40 * time.Second

// desiredStatus computes the DNS status from what the operator observed.
// Conditions follow OpenShift's (reference §3.3): Degraded for rollout
// states is suppressed while Progressing (OCPBUGS-14346), but a spec or
// Corefile problem is reported at once, as no rollout will clear it. A
// condition's lastTransitionTime is kept while its status does not change.
// recheck, when not 0, is when a transition held back by flapTolerance
// is due: the caller computes the status again then.
func desiredStatus(dns *operatorv1.DNS, clusterDomain string, o observed, now metav1.Time) (st operatorv1.DNSStatus, recheck time.Duration) {
	st = operatorv1.DNSStatus{
		ClusterDomain:      clusterDomain,
		ObservedGeneration: dns.Generation,
		Upstreams:          dns.Status.Upstreams,
	}
	if o.healthWatched {
		st.Upstreams = o.upstreams
	}
	hasIP := o.service != nil && o.service.Spec.ClusterIP != "" && o.service.Spec.ClusterIP != corev1.ClusterIPNone
	if hasIP {
		st.ClusterIP = o.service.Spec.ClusterIP
	}

	var progressing []string
	switch {
	case !hasIP:
		progressing = append(progressing, "The DNS service has no cluster IP address.")
	case o.pods == nil:
		progressing = append(progressing, "The DNS daemonset does not exist.")
	case o.pods.Updated < o.pods.Desired:
		progressing = append(progressing, fmt.Sprintf("Have %d up-to-date DNS pods, want %d.", o.pods.Updated, o.pods.Desired))
	}

	var unavailable, unavailableMsgs []string
	if !hasIP {
		unavailable, unavailableMsgs = append(unavailable, "NoService"), append(unavailableMsgs, "No DNS service exists.")
	}
	switch {
	case o.pods == nil:
		unavailable, unavailableMsgs = append(unavailable, "NoDaemonSet"), append(unavailableMsgs, "The DNS daemonset does not exist.")
	case o.pods.Available == 0:
		unavailable, unavailableMsgs = append(unavailable, "NoDaemonSetPods"), append(unavailableMsgs, "No DNS pods are available.")
	}

	var rollout []string
	if len(unavailable) > 0 {
		rollout = append(rollout, unavailableMsgs...)
	} else if o.pods.Desired > 0 {
		// At most 10% of the pods, rounded up, may be unavailable.
		maxUnavailable := (o.pods.Desired + 9) / 10
		if n := o.pods.Desired - o.pods.Available; n > maxUnavailable {
			rollout = append(rollout, fmt.Sprintf("Too many DNS pods are unavailable (%d > %d max unavailable).", n, maxUnavailable))
		}
	} else {
		rollout = append(rollout, "No DNS pods are desired; the DNS daemonset's node selector matches no node.")
	}

	var config []string
	for _, s := range o.skipped {
		config = append(config, s.String())
	}
	switch {
	case o.rejected != "" && o.fallback:
		config = append(config, "The rendered Corefile was not published, and none was before: the Corefile of the default DNS spec is served: "+o.rejected)
	case o.rejected != "":
		config = append(config, "The rendered Corefile was not published, the last good one is served: "+o.rejected)
	}
	if o.dryLoadFailed != "" {
		config = append(config, "The rendered Corefile was not published (the last published one, if any, is served): it could not be checked: "+o.dryLoadFailed+"; retrying with backoff. This is no verdict on the Corefile.")
	}
	switch {
	case o.tooLarge != "" && o.fallback:
		config = append(config, "The rendered Corefile was not published, and none was before: the Corefile of the default DNS spec is served: "+o.tooLarge+".")
	case o.tooLarge != "":
		config = append(config, "The rendered Corefile was not published (the last published one, if any, is served): "+o.tooLarge+".")
	}

	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		c := metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: dns.Generation, LastTransitionTime: now}
		if old := meta.FindStatusCondition(dns.Status.Conditions, t); old != nil && old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		st.Conditions = append(st.Conditions, c)
	}
	// damped is set for a rollout-driven condition: a False→True change
	// within flapTolerance of the last transition keeps the old condition.
	damped := func(t string, status metav1.ConditionStatus, reason, msg string) {
		old := meta.FindStatusCondition(dns.Status.Conditions, t)
		if status == metav1.ConditionTrue && old != nil && old.Status == metav1.ConditionFalse {
			if left := flapTolerance - now.Sub(old.LastTransitionTime.Time); left > 0 {
				c := *old
				c.ObservedGeneration = dns.Generation
				st.Conditions = append(st.Conditions, c)
				if recheck == 0 || left < recheck {
					recheck = left
				}
				return
			}
		}
		set(t, status, reason, msg)
	}
	if len(unavailable) > 0 {
		set(operatorv1.DNSAvailable, metav1.ConditionFalse, strings.Join(unavailable, "And"), strings.Join(unavailableMsgs, " "))
	} else {
		set(operatorv1.DNSAvailable, metav1.ConditionTrue, "AsExpected", "The DNS pods are available, and the DNS service has a cluster IP address.")
	}
	if len(progressing) > 0 {
		damped(operatorv1.DNSProgressing, metav1.ConditionTrue, "Reconciling", strings.Join(progressing, " "))
	} else {
		set(operatorv1.DNSProgressing, metav1.ConditionFalse, "AsExpected", "All DNS pods are updated, and the DNS service has a cluster IP address.")
	}
	switch {
	case len(config) > 0:
		reason := "InvalidSpec"
		switch {
		case o.rejected != "":
			reason = "CorefileRejected"
		case o.tooLarge != "":
			reason = "CorefileTooLarge"
		case o.dryLoadFailed != "":
			reason = "DryLoadFailed"
		}
		set(operatorv1.DNSDegraded, metav1.ConditionTrue, reason, strings.Join(config, "; "))
	case len(rollout) > 0 && len(progressing) == 0:
		damped(operatorv1.DNSDegraded, metav1.ConditionTrue, "DegradedConditions", strings.Join(rollout, " "))
	default:
		set(operatorv1.DNSDegraded, metav1.ConditionFalse, "AsExpected", "Enough DNS pods are available, and the DNS service has a cluster IP address.")
	}
	if o.healthWatched {
		if msg := unhealthyUpstreams(st.Upstreams); msg != "" {
			set(operatorv1.DNSUpstreamsAvailable, metav1.ConditionFalse, "UpstreamUnhealthy", msg)
		} else {
			set(operatorv1.DNSUpstreamsAvailable, metav1.ConditionTrue, "AsExpected", "Every nameserver the cluster DNS forwards to passes CoreDNS's health checks, or has not been health-checked.")
		}
	}
	if o.unmanaged {
		// Nothing is changed, so nothing else is claimed about the spec.
		const note = " The DNS is Unmanaged: the operator changes nothing."
		for i := range st.Conditions {
			// A condition kept from the last status (flapTolerance) has it.
			if !strings.HasSuffix(st.Conditions[i].Message, note) {
				st.Conditions[i].Message += note
			}
		}
	}
	return st, recheck
}

// statusEqual reports whether writing want over have would change
// nothing: a resync with no change writes nothing.
func statusEqual(have, want operatorv1.DNSStatus) bool {
	return equality.Semantic.DeepEqual(have, want)
}
