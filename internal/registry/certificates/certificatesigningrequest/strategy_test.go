package certificatesigningrequest

import (
	"context"
	"reflect"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/authn"
)

func TestRequesterIsTheAuthenticatedUser(t *testing.T) {
	t.Parallel()
	ctx := authn.WithUser(context.Background(), authn.User{Name: "alice", UID: "u1", Groups: []string{"dev"}, Extra: map[string][]string{"scope": {"x"}}})
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Username: "mallory", Groups: []string{"system:masters"}},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("forged")}}
	New().PrepareForCreate(ctx, csr)
	want := certificatesv1.CertificateSigningRequestSpec{Username: "alice", UID: "u1", Groups: []string{"dev"},
		Extra: map[string]certificatesv1.ExtraValue{"scope": {"x"}}}
	if !reflect.DeepEqual(csr.Spec, want) {
		t.Errorf("spec %+v, want %+v", csr.Spec, want)
	}
	if csr.Status.Certificate != nil || csr.Status.Conditions == nil || len(csr.Status.Conditions) != 0 {
		t.Errorf("status %+v, want empty conditions", csr.Status)
	}

	anonymous := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Username: "mallory"}}
	New().PrepareForCreate(context.Background(), anonymous)
	if anonymous.Spec.Username != "" {
		t.Errorf("without a user: username %q", anonymous.Spec.Username)
	}
}

func TestUpdateKeepsSpecAndStatus(t *testing.T) {
	t.Parallel()
	old := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Username: "alice", SignerName: "example.com/a"},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("cert")}}
	obj := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Username: "bob", SignerName: "example.com/b"}}
	New().PrepareForUpdate(context.Background(), obj, old)
	if !reflect.DeepEqual(obj.Spec, old.Spec) || !reflect.DeepEqual(obj.Status, old.Status) {
		t.Errorf("update changed spec or status: %+v", obj)
	}
}

func TestStatusConditions(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stored := metav1.NewTime(now.Add(-time.Hour))
	s := New()
	s.Now = func() time.Time { return now }
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "AutoApproved", LastUpdateTime: stored, LastTransitionTime: stored}
	old := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{
		Conditions: []certificatesv1.CertificateSigningRequestCondition{approved}}}
	// A signer rewrites the Approved condition and adds Failed without
	// timestamps: Approved stays as stored, Failed gets now.
	obj := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{
		Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Changed"},
			{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue},
		}}}
	s.PrepareForStatusUpdate(context.Background(), obj, old)
	if got := obj.Status.Conditions[0]; !reflect.DeepEqual(got, approved) {
		t.Errorf("Approved %+v, want the stored %+v", got, approved)
	}
	if got := obj.Status.Conditions[1]; !got.LastUpdateTime.Time.Equal(now) || !got.LastTransitionTime.Time.Equal(now) {
		t.Errorf("Failed timestamps %v %v, want %v", got.LastUpdateTime, got.LastTransitionTime, now)
	}
}
