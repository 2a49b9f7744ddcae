// Package dns is the strategy of operator.dnsplane.io/v1 DNS: the
// singleton name "default", the spec defaults, and the spec rules of
// internal/operator/dnsspec on create and update (and so on apply and
// patch). Invalid objects get a 422 whose causes name each field; the
// status subresource is written only through /status.
package dns

import (
	"context"
	"net/netip"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Strategy is the DNS strategy.
type Strategy struct {
	rest.Default
	// ClusterDomain is the cluster DNS's cluster domain, which no forward
	// plugin may take over; empty means cluster.local.
	ClusterDomain string
	// OwnAddresses, when set, returns the addresses this cluster's DNS
	// serves on (in `dnsplane up`, the cluster DNS's and node cache's),
	// which no forwarder may name: a forwarding loop
	// (dnsspec.ValidateNotOwn). It is asked on every write, as the
	// addresses are settled only when the DNS servers start.
	OwnAddresses func() []netip.AddrPort
}

var (
	_ rest.Strategy     = Strategy{}
	_ rest.Generational = Strategy{}
)

// GenerationChanged is the rule kube-apiserver applies to custom resources
// with a status subresource, which DNS is served as: a new generation when
// the spec changes. The operator reports the generation it acted on in
// status.observedGeneration.
func (Strategy) GenerationChanged(obj, old any) bool { return rest.SpecChanged(obj, old) }

// New returns the DNS strategy for a cluster whose cluster domain is
// clusterDomain ("" for cluster.local).
func New(clusterDomain string) Strategy {
	return Strategy{Default: rest.Default{Status: true}, ClusterDomain: clusterDomain}
}

// PrepareForCreate clears the status and applies the spec defaults.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Default.PrepareForCreate(ctx, obj)
	dnsspec.SetDefaults(&obj.(*operatorv1.DNS).Spec)
}

// PrepareForUpdate keeps the stored status and applies the spec defaults.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Default.PrepareForUpdate(ctx, obj, old)
	dnsspec.SetDefaults(&obj.(*operatorv1.DNS).Spec)
}

// Validate checks a new DNS: its metadata, with a name rule that admits
// only "default" (the operator reconciles that object alone, and a second
// DNS would be silently ignored), then its spec.
func (s Strategy) Validate(_ context.Context, obj any) field.ErrorList {
	d := obj.(*operatorv1.DNS)
	errs := apivalidation.ValidateObjectMeta(&d.ObjectMeta, false, dnsspec.ValidateName, field.NewPath("metadata"))
	errs = append(errs, dnsspec.ValidateSpec(&d.Spec, s.ClusterDomain, field.NewPath("spec"))...)
	return append(errs, s.validateNotOwn(&d.Spec, nil)...)
}

// ValidateUpdate checks the spec of an update; what the update leaves
// unchanged is not checked again, so a DNS stored before a rule existed
// keeps taking status writes (which go through here too).
func (s Strategy) ValidateUpdate(_ context.Context, obj, old any) field.ErrorList {
	spec, oldSpec := &obj.(*operatorv1.DNS).Spec, &old.(*operatorv1.DNS).Spec
	errs := dnsspec.ValidateSpecUpdate(spec, oldSpec, s.ClusterDomain, field.NewPath("spec"))
	return append(errs, s.validateNotOwn(spec, oldSpec)...)
}

func (s Strategy) validateNotOwn(spec, old *operatorv1.DNSSpec) field.ErrorList {
	if s.OwnAddresses == nil {
		return nil
	}
	return dnsspec.ValidateNotOwn(spec, old, s.OwnAddresses(), field.NewPath("spec"))
}
