package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Printers of admissionregistration.k8s.io/v1 admission policies, with the
// columns and cells of kube-apiserver's (pkg/printers/internalversion).

func admissionKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: kind}
}

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
			if k := o.Spec.ParamKind; k != nil {
				paramKind = k.APIVersion + "/" + k.Kind
			}
			return []any{o.Name, int64(len(o.Spec.Validations)), paramKind, cellAge(o.CreationTimestamp, now)}
		},
	)
}

func validatingAdmissionPolicyBindingPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
			colPlain("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
			colAge(),
		},
		func(o *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
			return []any{o.Name, o.Spec.PolicyName, paramRefCell(o.Spec.ParamRef), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// paramRefCell is PARAMREF: namespace/name, */name when the namespace is
// not known from the binding (the param may be cluster-scoped), or the
// selector.
func paramRefCell(r *admissionregistrationv1.ParamRef) string {
	switch {
	case r == nil:
		return "<unset>"
	case r.Name != "" && r.Namespace != "":
		return r.Namespace + "/" + r.Name
	case r.Name != "":
		return "*/" + r.Name
	case r.Selector != nil:
		return r.Selector.String()
	}
	return "<unset>"
}
