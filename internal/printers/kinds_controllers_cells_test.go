package printers

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestTableControllerKindCells covers the cells with logic of the kinds
// once printed by k8s.io/kubernetes pkg/printers/internalversion. Each
// object's expected cells are what upstream's handler printed for it (the
// printers were cross-checked against upstream's before its import was
// dropped: linking it ran every API group's install in every process).
func TestTableControllerKindCells(t *testing.T) {
	t.Parallel()
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	deleting := tblMeta("gone", time.Hour)
	deleting.DeletionTimestamp = tblAgoPtr(time.Second)
	beta := tblMeta("beta", time.Hour)
	beta.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "old"}
	block := corev1.PersistentVolumeBlock
	// Out of order and repeated: printed once each, in RWO ROX RWX RWOP order.
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce}
	storage := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(s)}
	}
	u50, u80 := int32(50), int32(80)
	defaultClass := metav1.ObjectMeta{Name: "def", CreationTimestamp: tblAgo(time.Hour),
		Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}}
	owned := func(name, apiVersion, kind string) metav1.ObjectMeta {
		m := tblMeta(name, time.Hour)
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "owner", Controller: tblPtr(true)}}
		return m
	}
	pct := intstr.FromString("50%")

	for _, tt := range []struct {
		group, plural string
		cases         []tblCase
	}{
		{"", "persistentvolumes", []tblCase{
			{"empty", &corev1.PersistentVolume{}, []any{"", "0", "", "", "", "", "", "<unset>", "", "<unknown>", "<unset>"}},
			{"terminating", &corev1.PersistentVolume{ObjectMeta: deleting, Spec: corev1.PersistentVolumeSpec{AccessModes: modes, VolumeMode: &block,
				VolumeAttributesClassName: tblPtr("gold"), Capacity: storage("1500Mi")}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Oops"}},
				[]any{"gone", "1500Mi", "RWO,RWX,RWOP", "", "Terminating", "", "", "gold", "Oops", "60m", "Block"}},
			{"beta class annotation wins", &corev1.PersistentVolume{ObjectMeta: beta, Spec: corev1.PersistentVolumeSpec{StorageClassName: "new"}},
				[]any{"beta", "0", "", "", "", "", "old", "<unset>", "", "60m", "<unset>"}},
		}},
		{"", "persistentvolumeclaims", []tblCase{
			{"bound", &corev1.PersistentVolumeClaim{ObjectMeta: deleting, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv", StorageClassName: tblPtr("x"),
				VolumeAttributesClassName: tblPtr("gold")}, Status: corev1.PersistentVolumeClaimStatus{AccessModes: modes, Capacity: storage("2Gi")}},
				[]any{"gone", "Terminating", "pv", "2Gi", "RWO,RWX,RWOP", "x", "gold", "60m", "<unset>"}},
			{"unbound: no capacity or modes", &corev1.PersistentVolumeClaim{ObjectMeta: beta, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: tblPtr("x"), AccessModes: modes},
				Status: corev1.PersistentVolumeClaimStatus{AccessModes: modes, Capacity: storage("2Gi")}},
				[]any{"beta", "", "", "", "", "old", "<unset>", "60m", "<unset>"}},
		}},
		{"", "resourcequotas", []tblCase{
			{"sorted, limits apart", &corev1.ResourceQuota{ObjectMeta: tblMeta("q", time.Hour), Status: corev1.ResourceQuotaStatus{
				Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "limits.cpu": resource.MustParse("4"), "requests.memory": resource.MustParse("1Gi"),
					"limits.memory": resource.MustParse("2Gi"), "limitsx": resource.MustParse("1"), "count/foo.bar": resource.MustParse("3")},
				Used: corev1.ResourceList{"pods": resource.MustParse("3")}}},
				[]any{"q", "count/foo.bar: 0/3, limitsx: 0/1, pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 0/4, limits.memory: 0/2Gi", "60m"}},
		}},
		{"apps", "controllerrevisions", []tblCase{
			{"core owner", &appsv1.ControllerRevision{ObjectMeta: owned("r", "v1", "Pod"), Revision: 7}, []any{"r", "pod/owner", int64(7), "60m"}},
			{"no owner", &appsv1.ControllerRevision{ObjectMeta: tblMeta("r", time.Hour)}, []any{"r", "<none>", int64(0), "60m"}},
		}},
		{"policy", "poddisruptionbudgets", []tblCase{
			{"max unavailable", &policyv1.PodDisruptionBudget{ObjectMeta: tblMeta("p", time.Hour), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &pct},
				Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 3}}, []any{"p", "N/A", "50%", int64(3), "60m"}},
		}},
		{"autoscaling", "horizontalpodautoscalers", []tblCase{
			{"resource metrics and more", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: tblMeta("h", time.Hour), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: autoscalingv2.MetricTarget{AverageUtilization: &u80}}},
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "memory", Target: autoscalingv2.MetricTarget{AverageValue: q("1Gi")}}},
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: q("1")}}},
				}}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu", Current: autoscalingv2.MetricValueStatus{AverageUtilization: &u50}}},
			}}}, []any{"h", "/", "cpu: 50%/80%, memory: <unknown>/1Gi + 1 more...", "<unset>", int64(3), int64(0), "60m"}},
			{"external and object", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: tblMeta("h", time.Hour), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: q("5")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{Value: q("7")}}},
			}}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: q("2")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{Current: autoscalingv2.MetricValueStatus{Value: q("9")}}},
			}}}, []any{"h", "/", "2/5 (avg), 9/7", "<unset>", int64(0), int64(0), "60m"}},
			{"container resource without target", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: tblMeta("h", time.Hour), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "cpu", Container: "c"}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Value: q("5")}}},
			}}}, []any{"h", "/", "cpu: <unknown>/<auto>, <unknown>/5", "<unset>", int64(0), int64(0), "60m"}},
		}},
		{"networking.k8s.io", "ingresses", []tblCase{
			{"empty", &networkingv1.Ingress{}, []any{"", "<none>", "*", "", "80", "<unknown>"}},
			{"tls, more rules, addresses", &networkingv1.Ingress{ObjectMeta: tblMeta("i", time.Hour), Spec: networkingv1.IngressSpec{TLS: []networkingv1.IngressTLS{{}},
				Rules: []networkingv1.IngressRule{{Host: "a"}, {}, {Host: "b"}, {Host: "c"}, {Host: "d"}}},
				Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{
					{IP: "10.0.0.2"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"}}}}},
				[]any{"i", "<none>", "a,b,c + 2 more...", "10.0.0.1,10.0.0.2,lb.example.com", "80, 443", "60m"}},
			{"three hosts among four rules", &networkingv1.Ingress{ObjectMeta: tblMeta("j", time.Hour), Spec: networkingv1.IngressSpec{
				Rules: []networkingv1.IngressRule{{Host: "a"}, {}, {Host: "b"}, {Host: "c"}}}},
				[]any{"j", "<none>", "a,b,c", "", "80", "60m"}},
		}},
		{"networking.k8s.io", "ingressclasses", []tblCase{
			{"default, parameters", &networkingv1.IngressClass{ObjectMeta: defaultClass, Spec: networkingv1.IngressClassSpec{
				Parameters: &networkingv1.IngressClassParametersReference{APIGroup: tblPtr("k8s.example.com"), Kind: "P", Name: "n"}}},
				[]any{"def (default)", "", "P.k8s.example.com/n", "60m"}},
		}},
		{"networking.k8s.io", "networkpolicies", []tblCase{
			{"expressions", &networkingv1.NetworkPolicy{ObjectMeta: tblMeta("n", time.Hour), Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In", Values: []string{"x", "y"}}}}}},
				[]any{"n", "a in (x,y)", "60m"}},
			{"everything", &networkingv1.NetworkPolicy{ObjectMeta: tblMeta("n", time.Hour)}, []any{"n", "<none>", "60m"}},
		}},
		{"certificates.k8s.io", "certificatesigningrequests", []tblCase{
			{"pending", &certificatesv1.CertificateSigningRequest{}, []any{"", "<unknown>", "<none>", "", "<none>", "Pending"}},
			// Denied wins over Approved whatever the condition's status.
			{"denied, failed, issued", &certificatesv1.CertificateSigningRequest{ObjectMeta: tblMeta("c", time.Hour),
				Spec: certificatesv1.CertificateSigningRequestSpec{ExpirationSeconds: tblPtr(int32(3 * 86400))},
				Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("x"), Conditions: []certificatesv1.CertificateSigningRequestCondition{
					{Type: certificatesv1.CertificateFailed}, {Type: certificatesv1.CertificateApproved}, {Type: certificatesv1.CertificateDenied, Status: corev1.ConditionFalse}}}},
				[]any{"c", "60m", "<none>", "", "3d", "Denied,Failed,Issued"}},
		}},
		{"certificates.k8s.io", "podcertificaterequests", []tblCase{
			{"last state wins", &certificatesv1.PodCertificateRequest{ObjectMeta: tblMeta("p", time.Hour),
				Spec:   certificatesv1.PodCertificateRequestSpec{UnverifiedUserAnnotations: map[string]string{"b": "2", "a": "1"}},
				Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied"}, {Type: "Other"}, {Type: "Failed"}}}},
				[]any{"p", "", "", "", "", "Failed", "a=1,b=2"}},
			{"pending", &certificatesv1.PodCertificateRequest{}, []any{"", "", "", "", "", "Pending", "<none>"}},
		}},
		{"certificates.k8s.io", "clustertrustbundles", []tblCase{
			{"no signer", &certificatesv1.ClusterTrustBundle{}, []any{"", "<none>"}},
		}},
	} {
		t.Run(tt.plural, func(t *testing.T) {
			t.Parallel()
			checkRows(t, tblResource(t, tt.group, tt.plural), tt.cases)
		})
	}
}
