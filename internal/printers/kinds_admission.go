package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The admissionregistration.k8s.io/v1 admission policy kinds, with
// kube-apiserver's columns and cells (k8s.io/kubernetes
// pkg/printers/internalversion).
var (
	vapKind  = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}
	vapbKind = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}
)

func validatingAdmissionPolicyPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Validations", "integer", "Validations indicates the number of validation rules defined in this configuration"),
			colPlain("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
			colAge(),
		},
		func(o *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
			paramKind := "<unset>"
			if pk := o.Spec.ParamKind; pk != nil {
				paramKind = pk.APIVersion + "/" + pk.Kind
			}
			return []any{o.Name, int64(len(o.Spec.Validations)), paramKind, cellAge(o.CreationTimestamp, now)}
		},
	)
}

// validatingAdmissionPolicyBindingPrinter: a paramRef by name without a
// namespace prints as "*/name", as upstream's does (it cannot tell whether
// the param kind is cluster-scoped).
func validatingAdmissionPolicyBindingPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
			colPlain("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
			colAge(),
		},
		func(o *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
			param := "<unset>"
			switch pr := o.Spec.ParamRef; {
			case pr == nil:
			case pr.Name != "" && pr.Namespace != "":
				param = pr.Namespace + "/" + pr.Name
			case pr.Name != "":
				param = "*/" + pr.Name
			case pr.Selector != nil:
				param = pr.Selector.String()
			}
			return []any{o.Name, o.Spec.PolicyName, param, cellAge(o.CreationTimestamp, now)}
		},
	)
}
