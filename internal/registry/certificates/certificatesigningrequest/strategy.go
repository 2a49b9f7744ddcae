// Package certificatesigningrequest is the strategy of certificates.k8s.io/v1
// CertificateSigningRequests: upstream's defaulting and validation
// (pkg/registry/certificates/certificates/strategy.go). The requester's
// identity is the authenticated user's, never the client's say; a request
// is immutable after creation except through /status, where the Approved
// and Denied conditions cannot change and condition timestamps are filled
// in as upstream's status strategy fills them. The /approval subresource
// changes the conditions only, Approved and Denied included. kube-apiserver's
// certificate admission plugins check creates, approvals and status writes
// (internal/admission).
package certificatesigningrequest

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/certificates"
	certificatesvalidation "k8s.io/kubernetes/pkg/apis/certificates/validation"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the CertificateSigningRequest strategy.
type Strategy struct {
	upstream.Strategy[certificates.CertificateSigningRequest]
	// Now is the clock of condition timestamps.
	Now func() time.Time
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.Declarative     = Strategy{}
	_ rest.FieldSelectable = Strategy{}

	_ rest.SubresourceStrategy = approvalStrategy{}
)

// approval is the subresource through which approvers add the Approved or
// Denied condition.
const approval = "approval"

// New returns the CertificateSigningRequest strategy.
func New() Strategy {
	return Strategy{
		Strategy: upstream.Strategy[certificates.CertificateSigningRequest]{
			Default: rest.Default{Status: true},
			Rules: upstream.Rules[certificates.CertificateSigningRequest]{
				Validate:             certificatesvalidation.ValidateCertificateSigningRequestCreate,
				ValidateUpdate:       certificatesvalidation.ValidateCertificateSigningRequestUpdate,
				ValidateStatusUpdate: certificatesvalidation.ValidateCertificateSigningRequestStatusUpdate,
			},
		},
		Now: time.Now,
	}
}

// PrepareForCreate replaces the requester's identity with the
// authenticated user's and clears the status: no request is created
// approved.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u, ok := authn.UserFrom(ctx); ok {
		csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups = u.Name, u.UID, u.Groups
		if len(u.Extra) > 0 {
			csr.Spec.Extra = make(map[string]certificatesv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				csr.Spec.Extra[k] = v
			}
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
}

// PrepareForUpdate keeps the stored spec and status: the main resource
// changes only metadata.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	csr, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = o.Spec
}

// PrepareForStatusUpdate keeps the stored Approved and Denied conditions
// where the write kept their number (validation refuses the rest) and
// fills in missing condition timestamps.
func (s Strategy) PrepareForStatusUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForStatusUpdate(ctx, obj, old)
	csr, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	preserveConditions(csr, o, certificatesv1.CertificateApproved)
	preserveConditions(csr, o, certificatesv1.CertificateDenied)
	s.fillTimestamps(csr, o)
}

// Subresources are the request's own: approval, through which approvers
// add the Approved or Denied condition (upstream's ApprovalREST,
// pkg/registry/certificates/certificates/storage: the store with
// csrApprovalStrategy).
func (s Strategy) Subresources() []rest.Subresource {
	return []rest.Subresource{{Name: approval, Verbs: []string{"get", "patch", "update"}, Document: rest.DocumentObject,
		Update: approvalStrategy{s}}}
}

// approvalStrategy is upstream's csrApprovalStrategy. Who may approve is
// CertificateApproval's, in the admission chain (internal/admission).
type approvalStrategy struct{ csr Strategy }

// PrepareForUpdate keeps everything but the conditions, whose missing
// timestamps it fills in.
func (a approvalStrategy) PrepareForUpdate(_ context.Context, obj, old any) any {
	a.csr.ApplyDefaults(obj)
	csr, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	a.csr.fillTimestamps(csr, o)
	conditions := csr.Status.Conditions
	csr.Spec = o.Spec
	csr.Status = *o.Status.DeepCopy()
	csr.Status.Conditions = conditions
	return obj
}

// ValidateUpdate is upstream's approval rule: Approved and Denied may be
// added, no Approved, Denied or Failed condition removed.
func (a approvalStrategy) ValidateUpdate(_ context.Context, obj, old any) field.ErrorList {
	in, o, err := a.csr.internalPair(obj, old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return certificatesvalidation.ValidateCertificateSigningRequestApprovalUpdate(in, o)
}

// ResetFields are the spec and the certificate, which an approval cannot
// set.
func (approvalStrategy) ResetFields() *fieldpath.Set {
	return fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("status", "certificate"))
}

// internalPair converts obj and old to upstream's internal type.
func (s Strategy) internalPair(obj, old any) (*certificates.CertificateSigningRequest, *certificates.CertificateSigningRequest, error) {
	var in, o certificates.CertificateSigningRequest
	if err := upstream.Convert(obj.(*certificatesv1.CertificateSigningRequest), &in); err != nil {
		return nil, nil, fmt.Errorf("upstream validation: %w", err)
	}
	if err := upstream.Convert(old.(*certificatesv1.CertificateSigningRequest), &o); err != nil {
		return nil, nil, fmt.Errorf("upstream validation: %w", err)
	}
	return &in, &o, nil
}

// SelectableFields are the fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"spec.signerName"} }

// FieldSet returns the selectable fields of a request.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"spec.signerName": obj.(*certificatesv1.CertificateSigningRequest).Spec.SignerName}
}

// preserveConditions is upstream's preserveConditionInstances.
func preserveConditions(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(csr, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, o := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[o]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// fillTimestamps is upstream's populateConditionTimestamps: a missing
// lastUpdateTime is now, a missing lastTransitionTime is the stored one of
// a condition of the same type and status, else now.
func (s Strategy) fillTimestamps(csr, old *certificatesv1.CertificateSigningRequest) {
	now := metav1.NewTime(s.Now())
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range old.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}
