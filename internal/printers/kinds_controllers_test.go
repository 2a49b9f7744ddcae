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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// controllerKindColumns are the kubectl get headers of the kinds the
// controllers' informers list (issue 19), as kube-apiserver 1.37 prints
// them; TestTableColumns checks them with the others.
var controllerKindColumns = map[string]string{
	"persistentvolumes":          "NAME CAPACITY ACCESS_MODES RECLAIM_POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE +VOLUMEMODE",
	"persistentvolumeclaims":     "NAME STATUS VOLUME CAPACITY ACCESS_MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE +VOLUMEMODE",
	"resourcequotas":             "NAME REQUEST LIMIT AGE",
	"limitranges":                "NAME CREATED_AT",
	"controllerrevisions":        "NAME CONTROLLER REVISION AGE",
	"poddisruptionbudgets":       "NAME MIN_AVAILABLE MAX_UNAVAILABLE ALLOWED_DISRUPTIONS AGE",
	"priorityclasses":            "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY",
	"horizontalpodautoscalers":   "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE",
	"ingresses":                  "NAME CLASS HOSTS ADDRESS PORTS AGE",
	"ingressclasses":             "NAME CONTROLLER PARAMETERS AGE",
	"networkpolicies":            "NAME POD-SELECTOR AGE",
	"servicecidrs":               "NAME CIDRS AGE",
	"ipaddresses":                "NAME PARENTREF",
	"certificatesigningrequests": "NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION",
	"podcertificaterequests":     "NAME PODNAME SERVICEACCOUNTNAME NODENAME SIGNERNAME STATE UNVERIFIEDUSERANNOTATIONS",
	"clustertrustbundles":        "NAME SIGNERNAME",
}

// upstreamExtraCells counts the cells kube-apiserver's handler prints
// beyond its columns: printIPAddress appends an age no column announces
// (kubectl ignores cells past the last column). dnsplane prints what
// kube-apiserver prints.
var upstreamExtraCells = map[string]int{"ipaddresses": 1}

func TestTableControllerKinds(t *testing.T) {
	t.Parallel()
	fs := corev1.PersistentVolumeFilesystem
	pv := &corev1.PersistentVolume{ObjectMeta: tblMeta("pv-1", time.Hour), Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		ClaimRef:                      &corev1.ObjectReference{Namespace: "team-a", Name: "data"},
		StorageClassName:              "local",
		VolumeMode:                    &fs,
	}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: tblMeta("data", 2*time.Minute), Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: &fs,
	}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	quota := &corev1.ResourceQuota{ObjectMeta: tblMeta("compute", time.Minute), Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceLimitsCPU: resource.MustParse("4")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3"), corev1.ResourceLimitsCPU: resource.MustParse("1")},
	}}
	created := time.Date(2025, 2, 1, 8, 0, 0, 0, time.UTC)
	limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default", CreationTimestamp: metav1.NewTime(created)}}
	rev := &appsv1.ControllerRevision{ObjectMeta: tblMeta("web-5d8f", 3*time.Hour), Revision: 2}
	rev.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "web", Controller: tblPtr(true)}}
	minAvail := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: tblMeta("web", time.Minute), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}}
	never := corev1.PreemptNever
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high", CreationTimestamp: tblAgo(time.Hour)}, Value: 1000, GlobalDefault: true, PreemptionPolicy: &never}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: tblMeta("web", 10*time.Minute), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    tblPtr(int32(2)), MaxReplicas: 5,
	}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2}}
	pathType := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{ObjectMeta: tblMeta("web", time.Minute), Spec: networkingv1.IngressSpec{
		IngressClassName: tblPtr("nginx"),
		Rules: []networkingv1.IngressRule{{Host: "web.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}},
	}}
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx", CreationTimestamp: tblAgo(time.Hour)},
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	netpol := &networkingv1.NetworkPolicy{ObjectMeta: tblMeta("deny", time.Minute), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	cidr := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", CreationTimestamp: tblAgo(time.Hour)},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12"}}}
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "node-csr", CreationTimestamp: tblAgo(time.Minute)},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Username: "system:node:n1"},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}}}

	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: tblMeta("web-1", time.Minute), Spec: certificatesv1.PodCertificateRequestSpec{
		SignerName: "example.com/pods", PodName: "web", ServiceAccountName: "default", NodeName: "n1"},
		Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue}}}}
	bundle := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:pods:roots"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/pods"}}

	for _, tt := range []struct {
		group, plural string
		obj           any
		want          []any
	}{
		{"", "persistentvolumes", pv, []any{"pv-1", "5Gi", "RWO,ROX", "Retain", "Bound", "team-a/data", "local", "<unset>", "", "60m", "Filesystem"}},
		{"", "persistentvolumeclaims", pvc, []any{"data", "Pending", "", "", "", "", "<unset>", "2m", "Filesystem"}},
		{"", "resourcequotas", quota, []any{"compute", "pods: 3/10", "limits.cpu: 1/4", "60s"}},
		{"", "limitranges", limits, []any{"limits", "2025-02-01T08:00:00Z"}},
		{"apps", "controllerrevisions", rev, []any{"web-5d8f", "daemonset.apps/web", int64(2), "3h"}},
		{"policy", "poddisruptionbudgets", pdb, []any{"web", "2", "N/A", int64(1), "60s"}},
		{"scheduling.k8s.io", "priorityclasses", pc, []any{"high", int64(1000), true, "60m", "Never"}},
		{"autoscaling", "horizontalpodautoscalers", hpa, []any{"web", "Deployment/web", "<none>", "2", int64(5), int64(2), "10m"}},
		{"networking.k8s.io", "ingresses", ing, []any{"web", "nginx", "web.example.com", "", "80", "60s"}},
		{"networking.k8s.io", "ingressclasses", class, []any{"nginx", "k8s.io/ingress-nginx", "<none>", "60m"}},
		{"networking.k8s.io", "networkpolicies", netpol, []any{"deny", "app=web", "60s"}},
		{"networking.k8s.io", "servicecidrs", cidr, []any{"kubernetes", "10.96.0.0/12", "60m"}},
		{"certificates.k8s.io", "podcertificaterequests", pcr, []any{"web-1", "web", "default", "n1", "example.com/pods", "Issued", "<none>"}},
		{"certificates.k8s.io", "clustertrustbundles", bundle, []any{"example.com:pods:roots", "example.com/pods"}},
		{"certificates.k8s.io", "certificatesigningrequests", csr, []any{"node-csr", "60s", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", "<none>", "Approved"}},
	} {
		t.Run(tt.plural, func(t *testing.T) {
			checkRows(t, tblResource(t, tt.group, tt.plural), []tblCase{{tt.plural, tt.obj, tt.want}})
		})
	}
}

// TestTableIPAddresses: kube-apiserver's row has the columns' cells and an
// age after them.
func TestTableIPAddresses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ip   *networkingv1.IPAddress
		want []any
	}{
		{"service", &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.10"}, Spec: networkingv1.IPAddressSpec{
			ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}}},
			[]any{"10.96.0.10", "services/kube-system/kube-dns", "<unknown>"}},
		// The group/resource is lowercased; a cluster-scoped parent has no namespace.
		{"grouped parent", &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "1.2.3.4", CreationTimestamp: tblAgo(time.Hour)}, Spec: networkingv1.IPAddressSpec{
			ParentRef: &networkingv1.ParentReference{Group: "Gateway.Networking.k8s.io", Resource: "Gateways", Name: "g"}}},
			[]any{"1.2.3.4", "gateways.gateway.networking.k8s.io/g", "60m"}},
		{"no parent", &networkingv1.IPAddress{}, []any{"", "<none>", "<unknown>"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Table(tblResource(t, "networking.k8s.io", "ipaddresses"), []any{tt.ip}, "None", metav1.ListMeta{}, tblNow)
			if err != nil {
				t.Fatal(err)
			}
			if got := table.Rows[0].Cells; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cells %#v, want %#v", got, tt.want)
			}
		})
	}
}
