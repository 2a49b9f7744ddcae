package rest

import "context"

// Admitter is a Strategy whose kind kube-apiserver's default mutating
// admission plugins change (DefaultTolerationSeconds and ServiceAccount
// for pods). The generic code runs it on every create and update of the
// main resource, dry runs included, after the kind's defaults and before
// validation, as kube-apiserver runs mutating admission between decoding
// and its registry's validation; never on subresources, which these
// plugins skip.
type Admitter interface {
	// Admit changes obj (old is nil on create) as the kind's admission
	// plugins do, or refuses the request with an API status error.
	Admit(ctx context.Context, obj, old any) error
}

// Admit runs s's admission when it has one.
func Admit(ctx context.Context, s Strategy, obj, old any) error {
	if a, ok := s.(Admitter); ok {
		return a.Admit(ctx, obj, old)
	}
	return nil
}

// ValidatingAdmitter is a Strategy whose kind kube-apiserver's default
// validating admission plugins check (PodSecurity for pods). The generic
// code runs it on every create and update of the main resource, dry runs
// included, after the kind's validation passed, as kube-apiserver runs
// validating admission after its registry's validation: an invalid object
// gets the 422, not the plugin's answer.
type ValidatingAdmitter interface {
	// ValidateAdmission refuses obj (old is nil on create) with an API
	// status error, or admits it.
	ValidateAdmission(ctx context.Context, obj, old any) error
}

// ValidateAdmission runs s's validating admission when it has one.
func ValidateAdmission(ctx context.Context, s Strategy, obj, old any) error {
	if a, ok := s.(ValidatingAdmitter); ok {
		return a.ValidateAdmission(ctx, obj, old)
	}
	return nil
}

// ValidateSubresourceAdmission runs the validating admission of a write
// through sub, a subresource that writes its parent whole, when its
// strategy has one (a ValidatingAdmitter: CertificateSigning on
// certificatesigningrequests/status, CertificateApproval on …/approval).
// The generic code runs it where it runs ValidatingAdmitter on the main
// resource: after the write's validation passed, dry runs included.
func ValidateSubresourceAdmission(ctx context.Context, sub Subresource, obj, old any) error {
	if a, ok := sub.Update.(ValidatingAdmitter); ok {
		return a.ValidateAdmission(ctx, obj, old)
	}
	return nil
}
