package printers

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cells kube-apiserver's admission policy printers give
// (pkg/printers/internalversion: printValidatingAdmissionPolicy{,Binding}).
func TestTableAdmissionPolicies(t *testing.T) {
	t.Parallel()
	checkRows(t, tblResource(t, "admissionregistration.k8s.io", "validatingadmissionpolicies"), []tblCase{
		{"params", &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: tblMeta("p", time.Minute), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}, {Expression: "false"}}}},
			[]any{"p", int64(2), "v1/ConfigMap", "60s"}},
		{"no params", &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: tblMeta("q", time.Minute)}, []any{"q", int64(0), "<unset>", "60s"}},
	})
	binding := func(ref *admissionregistrationv1.ParamRef) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: tblMeta("b", time.Minute),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: ref}}
	}
	checkRows(t, tblResource(t, "admissionregistration.k8s.io", "validatingadmissionpolicybindings"), []tblCase{
		{"none", binding(nil), []any{"b", "p", "<unset>", "60s"}},
		{"namespaced", binding(&admissionregistrationv1.ParamRef{Name: "cfg", Namespace: "ns"}), []any{"b", "p", "ns/cfg", "60s"}},
		{"name only", binding(&admissionregistrationv1.ParamRef{Name: "cfg"}), []any{"b", "p", "*/cfg", "60s"}},
		{"selector", binding(&admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}),
			[]any{"b", "p", (&metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}).String(), "60s"}},
	})
}
