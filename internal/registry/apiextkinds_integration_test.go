package registry_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"reflect"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	arvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// TestAPIExtensionKinds covers the last kinds kube-controller-manager
// --controllers=* lists (issue 19): admission policies and their bindings,
// StorageVersionMigrations, HorizontalPodAutoscalers at autoscaling/v1 and
// certificatesigningrequests/approval.
func TestAPIExtensionKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	for _, tt := range []struct {
		gvk   schema.GroupVersionKind
		cases func(ns string) []kindCase
	}{
		{admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), validatingAdmissionPolicyCases(t)},
		{admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"), validatingAdmissionPolicyBindingCases},
		{storagemigrationv1.SchemeGroupVersion.WithKind("StorageVersionMigration"), storageVersionMigrationCases},
		{autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), horizontalPodAutoscalerV1Cases},
	} {
		t.Run(tt.gvk.Kind+"."+tt.gvk.Version, func(t *testing.T) { runKindCases(t, ts.Client, tt.gvk, tt.cases) })
	}
	t.Run("policy generation and status", func(t *testing.T) { checkPolicyGeneration(t, ts.Client) })
	t.Run("hpa versions", func(t *testing.T) { checkHPAVersions(t, ts.Client) })
	t.Run("csr approval", func(t *testing.T) { checkCSRApproval(t, ts.Client) })
	t.Run("informers sync", func(t *testing.T) { checkAPIExtensionInformers(t, ts.Client) })
}

func validatingAdmissionPolicy(name, expression string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{TypeMeta: typed("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"), ObjectMeta: meta(name),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: expression}},
		}}
}

// validatingAdmissionPolicyCases: a CEL expression that does not compile
// is refused with the message upstream's validator gives for it (the CEL
// compiler's, long and positional, so computed here rather than copied).
func validatingAdmissionPolicyCases(t *testing.T) func(string) []kindCase {
	t.Helper()
	const broken = "object.spec.replicas <"
	return func(string) []kindCase {
		return []kindCase{
			{name: "valid", obj: validatingAdmissionPolicy("valid", "object.spec.replicas <= 5")},
			{name: "expression does not compile", obj: validatingAdmissionPolicy("broken", broken), causes: upstreamPolicyCauses(t, validatingAdmissionPolicy("broken", broken))},
			{name: "no validations", obj: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
				p := validatingAdmissionPolicy("empty", "true")
				p.Spec.Validations = nil
				return p
			}(), causes: []metav1.StatusCause{
				cause(required, "spec.validations", "Required value: validations or auditAnnotations must contain at least one item"),
				cause(required, "spec.auditAnnotations", "Required value: validations or auditAnnotations must contain at least one item"),
			}},
			// ManifestBasedAdmissionControlConfig (beta, on in 1.37)
			// reserves the suffix for policies loaded from files.
			{name: "static suffix", obj: validatingAdmissionPolicy("p.static.k8s.io", "true"), causes: []metav1.StatusCause{
				cause(invalid, "metadata.name", `Invalid value: "p.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`)}},
		}
	}
}

// upstreamPolicyCauses are the causes upstream's validator gives p, after
// upstream's defaults, as kube-apiserver's 422 lists them.
func upstreamPolicyCauses(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy) []metav1.StatusCause {
	t.Helper()
	p = p.DeepCopy()
	upstream.Default(p)
	var in admissionregistration.ValidatingAdmissionPolicy
	if err := upstream.Convert(p, &in); err != nil {
		t.Fatal(err)
	}
	errs := arvalidation.ValidateValidatingAdmissionPolicy(&in)
	if len(errs) == 0 {
		t.Fatalf("%q: upstream accepts it", p.Spec.Validations[0].Expression)
	}
	return statusCauses(errs)
}

func statusCauses(errs field.ErrorList) []metav1.StatusCause {
	out := make([]metav1.StatusCause, 0, len(errs))
	for _, e := range errs {
		out = append(out, metav1.StatusCause{Type: metav1.CauseType(e.Type), Message: e.ErrorBody(), Field: e.Field})
	}
	return out
}

func validatingAdmissionPolicyBindingCases(string) []kindCase {
	binding := func(name, policy string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{TypeMeta: typed("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"), ObjectMeta: meta(name),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions}}
	}
	return []kindCase{
		{name: "valid", obj: binding("valid", "valid", admissionregistrationv1.Deny)},
		{name: "unknown action", obj: binding("bad-action", "valid", "Block"), causes: []metav1.StatusCause{
			cause(unsupported, "spec.validationActions[0]", `Unsupported value: "Block": supported values: "Audit", "Deny", "Warn"`)}},
		{name: "static suffix", obj: binding("b.static.k8s.io", "valid", admissionregistrationv1.Deny), causes: []metav1.StatusCause{
			cause(invalid, "metadata.name", `Invalid value: "b.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`)}},
	}
}

func storageVersionMigrationCases(string) []kindCase {
	svm := func(name string, gr metav1.GroupResource) *storagemigrationv1.StorageVersionMigration {
		return &storagemigrationv1.StorageVersionMigration{TypeMeta: typed("storagemigration.k8s.io/v1", "StorageVersionMigration"), ObjectMeta: meta(name),
			Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: gr}}
	}
	return []kindCase{
		{name: "valid", obj: svm("valid", metav1.GroupResource{Group: "apps", Resource: "deployments"})},
		{name: "no resource", obj: svm("no-resource", metav1.GroupResource{Group: "apps"}), causes: []metav1.StatusCause{
			cause(required, "spec.resource.resource", "Required value: resource is required to be set")}},
		// The spec is immutable; upstream's message prints the internal
		// type, whose field has no JSON name.
		{name: "spec changed", before: svm("moved", metav1.GroupResource{Resource: "secrets"}), obj: svm("moved", metav1.GroupResource{Resource: "configmaps"}),
			causes: []metav1.StatusCause{cause(invalid, "spec", `Invalid value: {"Resource":{"group":"","resource":"configmaps"}}: field is immutable`)}},
	}
}

func horizontalPodAutoscalerV1(name string, minReplicas, maxReplicas int32) *autoscalingv1.HorizontalPodAutoscaler {
	h := &autoscalingv1.HorizontalPodAutoscaler{TypeMeta: typed("autoscaling/v1", "HorizontalPodAutoscaler"), ObjectMeta: meta(name),
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    maxReplicas,
		}}
	if minReplicas > 0 {
		h.Spec.MinReplicas = &minReplicas
	}
	return h
}

// horizontalPodAutoscalerV1Cases: v1 writes are checked by the v2 kind's
// validation after upstream's conversion, with v1's own field paths.
func horizontalPodAutoscalerV1Cases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: horizontalPodAutoscalerV1("valid-v1", 0, 3)},
		{name: "max below min", obj: horizontalPodAutoscalerV1("inverted-v1", 3, 2),
			causes: []metav1.StatusCause{cause(invalid, "spec.maxReplicas", "Invalid value: 2: must be greater than or equal to `minReplicas`")}},
	}
}

// checkPolicyGeneration: a policy starts at generation 1, a spec change
// bumps it, and the status written through /status stays.
func checkPolicyGeneration(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	policies := c.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	p, err := policies.Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || p.Generation != 1 || p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Fatalf("policy: %v %+v", err, p)
	}
	p.Status.ObservedGeneration = 1
	p.Status.TypeChecking = &admissionregistrationv1.TypeChecking{}
	if p, err = policies.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Spec.Validations[0].Expression = "object.spec.replicas <= 3"
	if p, err = policies.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.Generation != 2 || p.Status.ObservedGeneration != 1 || p.Status.TypeChecking == nil {
		t.Errorf("after a spec change: generation %d, status %+v", p.Generation, p.Status)
	}
}

// checkHPAVersions reads the v1 object at v2 and the v2 object at v1:
// one object, two views, converted by upstream's conversions.
func checkHPAVersions(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	const ns = "horizontalpodautoscaler"
	v2, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "valid-v1", metav1.GetOptions{})
	if err != nil || v2.Spec.MinReplicas == nil || *v2.Spec.MinReplicas != 1 || len(v2.Spec.Metrics) != 1 ||
		v2.Spec.Metrics[0].Resource == nil || v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
		t.Errorf("v1 object read at v2: %v %+v", err, v2)
	}
	target := int32(60)
	created, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("from-v2"),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 4,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target}}}},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := c.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "from-v2", metav1.GetOptions{})
	if err != nil || v1.Spec.TargetCPUUtilizationPercentage == nil || *v1.Spec.TargetCPUUtilizationPercentage != 60 ||
		v1.UID != created.UID || v1.ResourceVersion != created.ResourceVersion || v1.APIVersion != "" && v1.APIVersion != "autoscaling/v1" {
		t.Errorf("v2 object read at v1: %v %+v", err, v1)
	}
	v1.Spec.MaxReplicas = 6
	if _, err := c.AutoscalingV1().HorizontalPodAutoscalers(ns).Update(ctx, v1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v2, err = c.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "from-v2", metav1.GetOptions{})
	if err != nil || v2.Spec.MaxReplicas != 6 || len(v2.Spec.Metrics) != 1 || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 60 {
		t.Errorf("v1 update read at v2: %v %+v", err, v2)
	}
	list, err := c.AutoscalingV1().HorizontalPodAutoscalers("").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) < 2 {
		t.Errorf("v1 list: %v %+v", err, list)
	}
}

// checkCSRApproval approves a request through /approval, as
// kube-controller-manager's csrapproving controller and `kubectl
// certificate approve` do: only the conditions change, and an approval
// cannot be taken back.
func checkCSRApproval(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	der, _ := pkcs10(t)
	csrs := c.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: meta("to-approve"), Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), SignerName: "example.com/signer",
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := csr.Spec
	approved := csr.DeepCopy()
	approved.Spec.SignerName = "example.com/other"
	approved.Status.Certificate = []byte("not set through approval")
	approved.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}
	got, err := csrs.UpdateApproval(ctx, csr.Name, approved, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("approving: %v", err)
	}
	if !reflect.DeepEqual(got.Spec, spec) || len(got.Status.Certificate) != 0 || len(got.Status.Conditions) != 1 ||
		got.Status.Conditions[0].Type != certificatesv1.CertificateApproved || got.Status.Conditions[0].LastUpdateTime.IsZero() {
		t.Errorf("approved request: spec %+v (was %+v), status %+v", got.Spec, spec, got.Status)
	}
	if _, err := c.CoreV1().RESTClient().Get().AbsPath("/apis/certificates.k8s.io/v1/certificatesigningrequests/to-approve/approval").DoRaw(ctx); err != nil {
		t.Errorf("GET /approval: %v", err)
	}
	withdrawn := got.DeepCopy()
	withdrawn.Status.Conditions = nil
	_, err = csrs.UpdateApproval(ctx, csr.Name, withdrawn, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("withdrawing the approval: %v, want 422", err)
	}
	var code int
	c.CoreV1().RESTClient().Verb(http.MethodDelete).AbsPath("/apis/certificates.k8s.io/v1/certificatesigningrequests/to-approve/approval").Do(ctx).StatusCode(&code)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /approval: %d, want 405", code)
	}
}

// checkAPIExtensionInformers starts the informers kube-controller-manager's
// validatingadmissionpolicy-status, storage-version-migrator and HPA
// controllers start, and waits for them to sync.
func checkAPIExtensionInformers(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := informers.NewSharedInformerFactory(c, 0)
	f.Admissionregistration().V1().ValidatingAdmissionPolicies().Informer()
	f.Admissionregistration().V1().ValidatingAdmissionPolicyBindings().Informer()
	f.Storagemigration().V1().StorageVersionMigrations().Informer()
	f.Autoscaling().V1().HorizontalPodAutoscalers().Informer()
	f.Start(ctx.Done())
	defer f.Shutdown()
	for typ, synced := range f.WaitForCacheSync(ctx.Done()) {
		if !synced {
			t.Errorf("%v: informer did not sync", typ)
		}
	}
}
