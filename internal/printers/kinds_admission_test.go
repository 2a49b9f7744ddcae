package printers

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTableAdmissionKindCells covers the cells with logic of the admission
// policy kinds, as upstream's handlers in pkg/printers/internalversion
// print them.
func TestTableAdmissionKindCells(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		group, plural string
		cases         []tblCase
	}{
		{"admissionregistration.k8s.io", "validatingadmissionpolicies", []tblCase{
			{"no params", &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: tblMeta("p", time.Hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				Validations: []admissionregistrationv1.Validation{{Expression: "true"}, {Expression: "false"}}}},
				[]any{"p", int64(2), "<unset>", "60m"}},
			{"param kind", &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: tblMeta("p", time.Hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}}},
				[]any{"p", int64(0), "v1/ConfigMap", "60m"}},
		}},
		{"admissionregistration.k8s.io", "validatingadmissionpolicybindings", []tblCase{
			{"no param", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: tblMeta("b", time.Hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}},
				[]any{"b", "p", "<unset>", "60m"}},
			{"namespaced name", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: tblMeta("b", time.Hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "cfg", Namespace: "ns"}}}, []any{"b", "p", "ns/cfg", "60m"}},
			{"name in any namespace", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: tblMeta("b", time.Hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "cfg"}}}, []any{"b", "p", "*/cfg", "60m"}},
			{"selector", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: tblMeta("b", time.Hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}}, []any{"b", "p", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}", "60m"}},
		}},
	} {
		t.Run(tt.plural, func(t *testing.T) {
			t.Parallel()
			checkRows(t, tblResource(t, tt.group, tt.plural), tt.cases)
		})
	}
}
