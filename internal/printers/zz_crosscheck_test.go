package printers

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
)

func TestCrossCheckUpstream(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour))}
	}
	del := meta("gone")
	del.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	beta := meta("beta")
	beta.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "old"}
	def := meta("def")
	def.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	fs := corev1.PersistentVolumeBlock
	u50, u80 := int32(50), int32(80)
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce}
	rev := &appsv1.ControllerRevision{ObjectMeta: meta("r"), Revision: 7}
	rev.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", Controller: new(true)}}
	rev2 := &appsv1.ControllerRevision{ObjectMeta: meta("r2"), Revision: 1}
	rev2.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "s", Controller: new(true)}}
	pct := intstr.FromString("50%")
	cases := map[schema.GroupKind][]any{
		{Kind: "PersistentVolume"}: {
			&corev1.PersistentVolume{},
			&corev1.PersistentVolume{ObjectMeta: del, Spec: corev1.PersistentVolumeSpec{AccessModes: modes, VolumeMode: &fs, VolumeAttributesClassName: new("gold"),
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500Mi")}}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Oops"}},
			&corev1.PersistentVolume{ObjectMeta: beta, Spec: corev1.PersistentVolumeSpec{StorageClassName: "new"}},
		},
		{Kind: "PersistentVolumeClaim"}: {
			&corev1.PersistentVolumeClaim{},
			&corev1.PersistentVolumeClaim{ObjectMeta: del, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv", StorageClassName: new("x"), VolumeAttributesClassName: new("gold")},
				Status: corev1.PersistentVolumeClaimStatus{AccessModes: modes, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}},
			&corev1.PersistentVolumeClaim{ObjectMeta: beta, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: new("x"), AccessModes: modes},
				Status: corev1.PersistentVolumeClaimStatus{AccessModes: modes, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}},
		},
		{Kind: "ResourceQuota"}: {
			&corev1.ResourceQuota{},
			&corev1.ResourceQuota{ObjectMeta: meta("q"), Status: corev1.ResourceQuotaStatus{
				Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "limits.cpu": resource.MustParse("4"), "requests.memory": resource.MustParse("1Gi"), "limits.memory": resource.MustParse("2Gi"), "limitsx": resource.MustParse("1"), "count/foo.bar": resource.MustParse("3")},
				Used: corev1.ResourceList{"pods": resource.MustParse("3")}}},
		},
		{Group: "apps", Kind: "ControllerRevision"}: {&appsv1.ControllerRevision{}, rev, rev2},
		pdbKind: {&policyv1.PodDisruptionBudget{}, &policyv1.PodDisruptionBudget{ObjectMeta: meta("p"), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &pct}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 3}}},
		priorityClassKind: {&schedulingv1.PriorityClass{}, &schedulingv1.PriorityClass{ObjectMeta: meta("pc"), Value: -5}},
		hpaKind: {
			&autoscalingv2.HorizontalPodAutoscaler{},
			&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("h"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: autoscalingv2.MetricTarget{AverageUtilization: &u80}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "memory", Target: autoscalingv2.MetricTarget{AverageValue: q("1Gi")}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: q("1")}}},
			}}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu", Current: autoscalingv2.MetricValueStatus{AverageUtilization: &u50}}},
			}}},
			&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("h2"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: q("5")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{Value: q("7")}}},
			}}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: q("2")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{Current: autoscalingv2.MetricValueStatus{Value: q("9")}}},
			}}},
			&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("h3"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "cpu", Container: "c", Target: autoscalingv2.MetricTarget{}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Value: q("5")}}},
			}}},
		},
		ingressKind: {
			&networkingv1.Ingress{},
			&networkingv1.Ingress{ObjectMeta: meta("i"), Spec: networkingv1.IngressSpec{TLS: []networkingv1.IngressTLS{{}}, Rules: []networkingv1.IngressRule{{Host: "a"}, {}, {Host: "b"}, {Host: "c"}, {Host: "d"}}},
				Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.2"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"}}}}},
			&networkingv1.Ingress{ObjectMeta: meta("j"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "a"}, {}, {Host: "b"}, {Host: "c"}}}},
			&networkingv1.Ingress{ObjectMeta: meta("k"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{}, {}}}},
		},
		ingressClassKind: {&networkingv1.IngressClass{}, &networkingv1.IngressClass{ObjectMeta: def, Spec: networkingv1.IngressClassSpec{Parameters: &networkingv1.IngressClassParametersReference{APIGroup: new("k8s.example.com"), Kind: "P", Name: "n"}}},
			&networkingv1.IngressClass{ObjectMeta: meta("c"), Spec: networkingv1.IngressClassSpec{Parameters: &networkingv1.IngressClassParametersReference{Kind: "P", Name: "n"}}}},
		networkPolicyKind: {&networkingv1.NetworkPolicy{}, &networkingv1.NetworkPolicy{ObjectMeta: meta("n"), Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In", Values: []string{"x", "y"}}}}}}},
		serviceCIDRKind:   {&networkingv1.ServiceCIDR{}, &networkingv1.ServiceCIDR{ObjectMeta: meta("s"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/16", "fd00::/108"}}}},
		ipAddressKind: {&networkingv1.IPAddress{}, &networkingv1.IPAddress{ObjectMeta: meta("1.2.3.4"), Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "Gateway.Networking.k8s.io", Resource: "Gateways", Name: "g"}}}},
		csrKind: {&certificatesv1.CertificateSigningRequest{}, &certificatesv1.CertificateSigningRequest{ObjectMeta: meta("c"), Spec: certificatesv1.CertificateSigningRequestSpec{ExpirationSeconds: new(int32(86400 * 3))},
			Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("x"), Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateFailed}, {Type: certificatesv1.CertificateApproved}, {Type: certificatesv1.CertificateDenied, Status: corev1.ConditionFalse}}}}},
		podCertificateRequestKind: {&certificatesv1.PodCertificateRequest{}, &certificatesv1.PodCertificateRequest{ObjectMeta: meta("p"), Spec: certificatesv1.PodCertificateRequestSpec{UnverifiedUserAnnotations: map[string]string{"b": "2", "a": "1"}},
			Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied"}, {Type: "Other"}, {Type: "Failed"}}}}},
		clusterTrustBundleKind: {&certificatesv1.ClusterTrustBundle{}},
	}
	now := time.Now()
	for gk, objs := range cases {
		ours, theirs := byKind()[gk], upstreamPrinter(gk)
		if !reflect.DeepEqual(ours.Columns(), theirs.Columns()) {
			t.Errorf("%v columns\n ours %#v\n upstream %#v", gk, ours.Columns(), theirs.Columns())
		}
		for i, o := range objs {
			a, err := ours.Row(o, now)
			if err != nil {
				t.Fatal(err)
			}
			b, err := theirs.Row(o, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Cells, b.Cells) {
				t.Errorf("%v[%d] cells\n ours %#v\n upstream %#v", gk, i, a.Cells, b.Cells)
			}
		}
	}
}
