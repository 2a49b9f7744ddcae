package registry_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestControllerKinds runs, through the real API server, the cases of the
// kinds kube-controller-manager's and kube-scheduler's informers list
// (issue 19): a valid object of each is created (and read back with
// upstream's defaults, below), an invalid one gets kube-apiserver's 422.
// The messages are upstream's validators' own.
func TestControllerKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	for _, tt := range []struct {
		gvk   schema.GroupVersionKind
		cases func(ns string) []kindCase
	}{
		{corev1.SchemeGroupVersion.WithKind("PersistentVolume"), persistentVolumeCases},
		{corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), persistentVolumeClaimCases},
		{corev1.SchemeGroupVersion.WithKind("ResourceQuota"), resourceQuotaCases},
		{corev1.SchemeGroupVersion.WithKind("LimitRange"), limitRangeCases},
		{appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), controllerRevisionCases},
		{policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), podDisruptionBudgetCases},
		{schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), priorityClassCases},
		{autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), horizontalPodAutoscalerCases},
		{networkingv1.SchemeGroupVersion.WithKind("Ingress"), ingressCases},
		{networkingv1.SchemeGroupVersion.WithKind("IngressClass"), ingressClassCases},
		{networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), networkPolicyCases},
		{networkingv1.SchemeGroupVersion.WithKind("ServiceCIDR"), serviceCIDRCases},
		{networkingv1.SchemeGroupVersion.WithKind("IPAddress"), ipAddressCases},
		{certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), csrCases(t)},
		{certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest"), podCertificateRequestCases(t)},
		{certificatesv1.SchemeGroupVersion.WithKind("ClusterTrustBundle"), clusterTrustBundleCases(t)},
	} {
		t.Run(tt.gvk.Kind, func(t *testing.T) { runKindCases(t, ts.Client, tt.gvk, tt.cases) })
	}
	t.Run("defaults", func(t *testing.T) { checkControllerKindDefaults(t, ts.Client) })
	t.Run("system priority classes", func(t *testing.T) { checkSystemPriorityClasses(t, ts.Client) })
	t.Run("informers sync and watch", func(t *testing.T) { checkInformers(t, ts.Client) })
}

// checkInformers starts client-go's informers for every kind above, as
// kube-controller-manager and kube-scheduler do, waits for them to sync,
// then sees a new object of one arrive through its watch.
func checkInformers(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := informers.NewSharedInformerFactory(c, 0)
	claims := f.Core().V1().PersistentVolumeClaims()
	// Asking for an informer registers it with the factory.
	for _, register := range []func() cache.SharedIndexInformer{
		f.Core().V1().PersistentVolumes().Informer, claims.Informer,
		f.Core().V1().ResourceQuotas().Informer, f.Core().V1().LimitRanges().Informer,
		f.Apps().V1().ControllerRevisions().Informer, f.Policy().V1().PodDisruptionBudgets().Informer,
		f.Scheduling().V1().PriorityClasses().Informer, f.Autoscaling().V2().HorizontalPodAutoscalers().Informer,
		f.Networking().V1().Ingresses().Informer, f.Networking().V1().IngressClasses().Informer,
		f.Networking().V1().NetworkPolicies().Informer, f.Networking().V1().ServiceCIDRs().Informer,
		f.Networking().V1().IPAddresses().Informer, f.Certificates().V1().CertificateSigningRequests().Informer,
		f.Certificates().V1().PodCertificateRequests().Informer, f.Certificates().V1().ClusterTrustBundles().Informer,
	} {
		register()
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	for typ, synced := range f.WaitForCacheSync(ctx.Done()) {
		if !synced {
			t.Errorf("%v: informer did not sync", typ)
		}
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if _, err := c.CoreV1().PersistentVolumeClaims("persistentvolumeclaim").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		_, err := claims.Lister().PersistentVolumeClaims("persistentvolumeclaim").Get("watched")
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("the claim never reached the informer: %v", err)
	}
}

// checkControllerKindDefaults reads back objects the cases created and
// checks what upstream's defaulting and strategies set on them.
func checkControllerKindDefaults(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	pv, err := c.CoreV1().PersistentVolumes().Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Spec.VolumeMode == nil ||
		*pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pv.Status.Phase != corev1.VolumePending || pv.Status.LastPhaseTransitionTime == nil {
		t.Errorf("persistent volume: %v %+v", err, pv)
	}
	pvc, err := c.CoreV1().PersistentVolumeClaims("persistentvolumeclaim").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeMode == nil || *pvc.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("claim: %v %+v", err, pvc)
	}
	hpa, err := c.AutoscalingV2().HorizontalPodAutoscalers("horizontalpodautoscaler").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 1 || len(hpa.Spec.Metrics) != 1 ||
		hpa.Spec.Metrics[0].Resource == nil || *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("hpa: %v %+v", err, hpa)
	}
	np, err := c.NetworkingV1().NetworkPolicies("networkpolicy").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("network policy: %v %+v", err, np)
	}
	pc, err := c.SchedulingV1().PriorityClasses().Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("priority class: %v %+v", err, pc)
	}
	// The requester is the authenticated user, not what the client sent.
	csr, err := c.CertificatesV1().CertificateSigningRequests().Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || csr.Spec.Username == "" || csr.Spec.Username == "mallory" || len(csr.Status.Conditions) != 0 {
		t.Errorf("csr: %v %+v", err, csr)
	}
	pcr, err := c.CertificatesV1().PodCertificateRequests("podcertificaterequest").Get(ctx, "default-expiry", metav1.GetOptions{})
	if err != nil || pcr.Spec.MaxExpirationSeconds == nil || *pcr.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("pod certificate request: %v %+v", err, pcr)
	}
	// Both kinds are listable, as the controllers' informers list them.
	if _, err := c.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing claims in all namespaces: %v", err)
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing budgets in all namespaces: %v", err)
	}
}

// checkSystemPriorityClasses: the API server creates the two built-in
// classes and refuses to delete them with kube-apiserver's 403.
func checkSystemPriorityClasses(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for name, value := range map[string]int32{"system-cluster-critical": 2000000000, "system-node-critical": 2000001000} {
		pc, err := c.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
		if err != nil || pc.Value != value {
			t.Errorf("%s: %v %+v", name, err, pc)
			continue
		}
		err = c.SchedulingV1().PriorityClasses().Delete(ctx, name, metav1.DeleteOptions{})
		if want := `priorityclasses.scheduling.k8s.io "` + name + `" is forbidden: this is a system priority class and cannot be deleted`; !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("deleting %s: %v, want %q", name, err, want)
		}
	}
}

func typed(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func persistentVolumeCases(string) []kindCase {
	pv := func(name string, mutate func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
		p := &corev1.PersistentVolume{TypeMeta: typed("v1", "PersistentVolume"), ObjectMeta: meta(name), Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
		}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	return []kindCase{
		{name: "valid", obj: pv("valid", nil)},
		{name: "no capacity", obj: pv("no-capacity", func(p *corev1.PersistentVolume) { p.Spec.Capacity = nil }),
			causes: []metav1.StatusCause{cause(required, "spec.capacity", "Required value"),
				cause(unsupported, "spec.capacity", `Unsupported value: null: supported values: "storage"`)}},
		{name: "no source", obj: pv("no-source", func(p *corev1.PersistentVolume) { p.Spec.HostPath = nil }),
			causes: []metav1.StatusCause{cause(required, "spec", "Required value: must specify a volume type")}},
		{name: "status phase", before: pv("status", nil), status: true,
			obj: pv("status", func(p *corev1.PersistentVolume) { p.Status.Phase = corev1.VolumeAvailable })},
	}
}

func persistentVolumeClaimCases(string) []kindCase {
	pvc := func(name string, mutate func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{TypeMeta: typed("v1", "PersistentVolumeClaim"), ObjectMeta: meta(name), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	return []kindCase{
		{name: "valid", obj: pvc("valid", nil)},
		{name: "no access modes", obj: pvc("no-modes", func(p *corev1.PersistentVolumeClaim) { p.Spec.AccessModes = nil }),
			causes: []metav1.StatusCause{cause(required, "spec.accessModes", "Required value: at least 1 access mode is required")}},
		{name: "no storage request", obj: pvc("no-request", func(p *corev1.PersistentVolumeClaim) { p.Spec.Resources.Requests = nil }),
			causes: []metav1.StatusCause{cause(required, "spec.resources[storage]", "Required value")}},
	}
}

func resourceQuotaCases(string) []kindCase {
	rq := func(name, pods string) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{TypeMeta: typed("v1", "ResourceQuota"), ObjectMeta: meta(name),
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods)}}}
	}
	return []kindCase{
		{name: "valid", obj: rq("valid", "10")},
		{name: "negative", obj: rq("negative", "-1"),
			causes: []metav1.StatusCause{cause(invalid, "spec.hard[pods]", `Invalid value: "-1": must be greater than or equal to 0`)}},
		{name: "status used negative", before: rq("status", "10"), status: true, obj: func() *corev1.ResourceQuota {
			q := rq("status", "10")
			q.Status.Used = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("-2")}
			return q
		}(), causes: []metav1.StatusCause{cause(invalid, "status.used[pods]", `Invalid value: "-2": must be greater than or equal to 0`)}},
	}
}

func limitRangeCases(string) []kindCase {
	lr := func(name, lo, hi string) *corev1.LimitRange {
		return &corev1.LimitRange{TypeMeta: typed("v1", "LimitRange"), ObjectMeta: meta(name), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			Min:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lo)},
			Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(hi)},
		}}}}
	}
	return []kindCase{
		{name: "valid", obj: lr("valid", "100m", "2")},
		{name: "min above max", obj: lr("inverted", "2", "1"),
			causes: []metav1.StatusCause{
				cause(invalid, "spec.limits[0].min[cpu]", `Invalid value: "2": min value 2 is greater than max value 1`),
				// Defaulting sets default and defaultRequest to max.
				cause(invalid, "spec.limits[0].defaultRequest[cpu]", `Invalid value: "1": min value 2 is greater than default request value 1`),
				cause(invalid, "spec.limits[0].default[cpu]", `Invalid value: "2": min value 2 is greater than default value 1`),
			}},
		// An update is checked as a create.
		{name: "update to min above max", before: lr("upd", "1", "2"), obj: lr("upd", "3", "2"),
			causes: []metav1.StatusCause{
				cause(invalid, "spec.limits[0].min[cpu]", `Invalid value: "3": min value 3 is greater than max value 2`),
				cause(invalid, "spec.limits[0].defaultRequest[cpu]", `Invalid value: "2": min value 3 is greater than default request value 2`),
				cause(invalid, "spec.limits[0].default[cpu]", `Invalid value: "3": min value 3 is greater than default value 2`),
			}},
	}
}

func controllerRevisionCases(string) []kindCase {
	cr := func(name string, revision int64, data string) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{TypeMeta: typed("apps/v1", "ControllerRevision"), ObjectMeta: meta(name),
			Revision: revision, Data: runtime.RawExtension{Raw: []byte(data)}}
	}
	return []kindCase{
		{name: "valid", obj: cr("valid", 1, `{"spec":{}}`)},
		{name: "negative revision", obj: cr("negative", -1, `{}`),
			causes: []metav1.StatusCause{cause(invalid, "revision", "Invalid value: -1: must be greater than or equal to 0")}},
		{name: "data changed", before: cr("immutable", 1, `{"a":1}`), obj: cr("immutable", 1, `{"a":2}`),
			causes: []metav1.StatusCause{cause(invalid, "data", `Invalid value: {"a":2}: field is immutable`)}},
	}
}

func podDisruptionBudgetCases(string) []kindCase {
	pdb := func(name string, mutate func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
		one := intstr.FromInt32(1)
		p := &policyv1.PodDisruptionBudget{TypeMeta: typed("policy/v1", "PodDisruptionBudget"), ObjectMeta: meta(name),
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: app}}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	return []kindCase{
		{name: "valid", obj: pdb("valid", nil)},
		// Upstream reports the internal spec, Go field names and all.
		{name: "both minAvailable and maxUnavailable", obj: pdb("both", func(p *policyv1.PodDisruptionBudget) {
			one := intstr.FromInt32(1)
			p.Spec.MaxUnavailable = &one
		}), causes: []metav1.StatusCause{cause(invalid, "spec", `Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`)}},
		{name: "status negative disruptionsAllowed", before: pdb("status", nil), status: true,
			obj:    pdb("status", func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed = -1 }),
			causes: []metav1.StatusCause{cause(invalid, "status.disruptionsAllowed", "Invalid value: -1: must be greater than or equal to 0")}},
	}
}

func priorityClassCases(string) []kindCase {
	pc := func(name string, value int32) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{TypeMeta: typed("scheduling.k8s.io/v1", "PriorityClass"), ObjectMeta: meta(name), Value: value}
	}
	return []kindCase{
		{name: "valid", obj: pc("valid", 1000)},
		{name: "reserved prefix", obj: pc("system-mine", 1000),
			causes: []metav1.StatusCause{cause(forbidden, "metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class")}},
		{name: "value changed", before: pc("immutable", 1), obj: pc("immutable", 2),
			causes: []metav1.StatusCause{cause(forbidden, "value", "Forbidden: may not be changed in an update.")}},
		{name: "built-in value changed", obj: pc("system-node-critical", 1),
			causes: []metav1.StatusCause{cause(forbidden, "metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000")}},
	}
}

func horizontalPodAutoscalerCases(string) []kindCase {
	hpa := func(name string, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
		h := &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: typed("autoscaling/v2", "HorizontalPodAutoscaler"), ObjectMeta: meta(name),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MaxReplicas:    maxReplicas,
			}}
		if minReplicas > 0 {
			h.Spec.MinReplicas = &minReplicas
		}
		return h
	}
	return []kindCase{
		{name: "valid", obj: hpa("valid", 0, 3)},
		{name: "max below min", obj: hpa("inverted", 3, 2),
			causes: []metav1.StatusCause{cause(invalid, "spec.maxReplicas", "Invalid value: 2: must be greater than or equal to `minReplicas`")}},
		{name: "status negative replicas", before: hpa("status", 0, 3), status: true, obj: func() *autoscalingv2.HorizontalPodAutoscaler {
			h := hpa("status", 0, 3)
			h.Status.CurrentReplicas = -1
			return h
		}(), causes: []metav1.StatusCause{cause(invalid, "status.currentReplicas", "Invalid value: -1: must be greater than or equal to 0")}},
	}
}

func ingressCases(string) []kindCase {
	ing := func(name string, pathType *networkingv1.PathType) *networkingv1.Ingress {
		return &networkingv1.Ingress{TypeMeta: typed("networking.k8s.io/v1", "Ingress"), ObjectMeta: meta(name), Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: "web.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: pathType, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
			}}}},
		}}
	}
	prefix := networkingv1.PathTypePrefix
	return []kindCase{
		{name: "valid", obj: ing("valid", &prefix)},
		{name: "no pathType", obj: ing("no-path-type", nil),
			causes: []metav1.StatusCause{cause(required, "spec.rules[0].http.paths[0].pathType", "Required value: pathType must be specified")}},
		{name: "status ip", before: ing("status", &prefix), status: true, obj: func() *networkingv1.Ingress {
			i := ing("status", &prefix)
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.999"}}
			return i
		}(), causes: []metav1.StatusCause{cause(invalid, "status.loadBalancer.ingress[0].ip", `Invalid value: "10.0.0.999": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`)}},
	}
}

func ingressClassCases(string) []kindCase {
	ic := func(name, controller string) *networkingv1.IngressClass {
		return &networkingv1.IngressClass{TypeMeta: typed("networking.k8s.io/v1", "IngressClass"), ObjectMeta: meta(name),
			Spec: networkingv1.IngressClassSpec{Controller: controller}}
	}
	return []kindCase{
		{name: "valid", obj: ic("valid", "example.com/ingress")},
		{name: "controller without domain", obj: ic("bad", "ingress"),
			causes: []metav1.StatusCause{cause(invalid, "spec.controller", `Invalid value: "ingress": must be a domain-prefixed path (such as "acme.io/foo")`)}},
		{name: "controller changed", before: ic("immutable", "example.com/a"), obj: ic("immutable", "example.com/b"),
			causes: []metav1.StatusCause{cause(invalid, "spec.controller", `Invalid value: "example.com/b": field is immutable`)}},
	}
}

func networkPolicyCases(string) []kindCase {
	np := func(name, cidr string) *networkingv1.NetworkPolicy {
		p := &networkingv1.NetworkPolicy{TypeMeta: typed("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: meta(name)}
		if cidr != "" {
			p.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr}}}}}
		}
		return p
	}
	return []kindCase{
		{name: "valid", obj: np("valid", "")},
		{name: "invalid cidr", obj: np("bad-cidr", "10.0.0.0/33"),
			causes: []metav1.StatusCause{cause(invalid, "spec.ingress[0].from[0].ipBlock.cidr", `Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`)}},
	}
}

func serviceCIDRCases(string) []kindCase {
	sc := func(name string, cidrs ...string) *networkingv1.ServiceCIDR {
		return &networkingv1.ServiceCIDR{TypeMeta: typed("networking.k8s.io/v1", "ServiceCIDR"), ObjectMeta: meta(name),
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	}
	return []kindCase{
		{name: "valid", obj: sc("valid", "10.100.0.0/16")},
		{name: "no cidrs", obj: sc("empty"),
			causes: []metav1.StatusCause{cause(required, "spec.cidrs", "Required value: at least one CIDR required")}},
		{name: "cidrs changed", before: sc("immutable", "10.101.0.0/16"), obj: sc("immutable", "10.102.0.0/16"),
			causes: []metav1.StatusCause{cause(invalid, "spec.cidrs[0]", `Invalid value: "10.102.0.0/16": field is immutable`)}},
	}
}

func ipAddressCases(string) []kindCase {
	ip := func(name string, parent *networkingv1.ParentReference) *networkingv1.IPAddress {
		return &networkingv1.IPAddress{TypeMeta: typed("networking.k8s.io/v1", "IPAddress"), ObjectMeta: meta(name),
			Spec: networkingv1.IPAddressSpec{ParentRef: parent}}
	}
	svc := &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	return []kindCase{
		{name: "valid", obj: ip("10.96.0.77", svc)},
		{name: "no parentRef", obj: ip("10.96.0.78", nil),
			causes: []metav1.StatusCause{cause(required, "spec.parentRef", "Required value")}},
		{name: "name not an IP", obj: ip("web", svc),
			causes: []metav1.StatusCause{cause(invalid, "metadata.name", `Invalid value: "web": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`)}},
	}
}

// pkcs10 returns a fresh PKCS#10 request (DER) and a self-signed CA
// certificate (PEM) for the certificate kinds' cases.
func pkcs10(t *testing.T) (request, caPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request, err = x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "web"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "root"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return request, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert})
}

// csrCases builds CertificateSigningRequests around a fresh PKCS#10
// request; the requester a client names is replaced by the server.
func csrCases(t *testing.T) func(string) []kindCase {
	t.Helper()
	der, _ := pkcs10(t)
	request := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	return func(string) []kindCase {
		csr := func(name string, req []byte) *certificatesv1.CertificateSigningRequest {
			return &certificatesv1.CertificateSigningRequest{TypeMeta: typed("certificates.k8s.io/v1", "CertificateSigningRequest"), ObjectMeta: meta(name),
				Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: "example.com/signer", Username: "mallory",
					Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
		}
		notPEM, _ := json.Marshal([]byte("x"))
		return []kindCase{
			{name: "valid", obj: csr("valid", request)},
			{name: "request not PEM", obj: csr("not-pem", []byte("x")),
				causes: []metav1.StatusCause{cause(invalid, "spec.request", "Invalid value: "+string(notPEM)+": PEM block type must be CERTIFICATE REQUEST")}},
			// Approval is the /approval subresource's, not /status's.
			{name: "status approves", before: csr("approve", request), status: true, obj: func() *certificatesv1.CertificateSigningRequest {
				c := csr("approve", request)
				c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
				return c
			}(), causes: []metav1.StatusCause{cause(forbidden, "status.conditions", `Forbidden: updates may not add a condition of type "Approved"`)}},
		}
	}
}

func podCertificateRequestCases(t *testing.T) func(string) []kindCase {
	t.Helper()
	der, _ := pkcs10(t)
	return func(string) []kindCase {
		pcr := func(name string, maxExpiration *int32) *certificatesv1.PodCertificateRequest {
			return &certificatesv1.PodCertificateRequest{TypeMeta: typed("certificates.k8s.io/v1", "PodCertificateRequest"), ObjectMeta: meta(name),
				Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "web", PodUID: "pod-uid",
					ServiceAccountName: "default", ServiceAccountUID: "sa-uid", NodeName: "n1", NodeUID: "node-uid",
					MaxExpirationSeconds: maxExpiration, StubPKCS10Request: der}}
		}
		return []kindCase{
			{name: "valid", obj: pcr("valid", ptr(int32(86400)))},
			// Left out, maxExpirationSeconds is defaulted to a day.
			{name: "defaulted maxExpirationSeconds", obj: pcr("default-expiry", nil)},
			{name: "maxExpirationSeconds too short", obj: pcr("short", ptr(int32(10))),
				causes: []metav1.StatusCause{cause(invalid, "spec.maxExpirationSeconds", "Invalid value: 10: must be in the range [3600, 7862400]")}},
		}
	}
}

func clusterTrustBundleCases(t *testing.T) func(string) []kindCase {
	t.Helper()
	_, ca := pkcs10(t)
	return func(string) []kindCase {
		ctb := func(name, signer, bundle string) *certificatesv1.ClusterTrustBundle {
			return &certificatesv1.ClusterTrustBundle{TypeMeta: typed("certificates.k8s.io/v1", "ClusterTrustBundle"), ObjectMeta: meta(name),
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: bundle}}
		}
		return []kindCase{
			{name: "valid", obj: ctb("example.com:pods:roots", "example.com/pods", string(ca))},
			{name: "not PEM", obj: ctb("example.com:pods:bad", "example.com/pods", "x"),
				causes: []metav1.StatusCause{cause(invalid, "spec.trustBundle", `Invalid value: "<value omitted>": at least one trust anchor must be provided`)}},
			{name: "name without the signer's prefix", obj: ctb("roots", "example.com/pods", string(ca)),
				causes: []metav1.StatusCause{cause(invalid, "metadata.name", `Invalid value: "roots": ClusterTrustBundle for signerName example.com/pods must be named with prefix example.com:pods:`)}},
		}
	}
}
