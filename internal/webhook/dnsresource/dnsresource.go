// Package dnsresource is the validating admission webhook of
// operator.dnsplane.io/v1 DNS objects on a stock kube-apiserver, where DNS
// is a custom resource. The CRD's schema and CEL rules
// (internal/operator/crd) state the rules that a rule on one schema node
// can state; this webhook runs all of them, through the very code
// dnsplane's API server runs (the DNS strategy of
// internal/registry/operator/dns), so that a DNS is refused on a stock
// cluster with the field paths, and for the rules CEL cannot state the
// messages, of dnsplane's own server. docs/dns-operator.md ("On a stock
// cluster") lists which rule is enforced where.
package dnsresource

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
	dnsregistry "github.com/dnsplane/dnsplane/internal/registry/operator/dns"
)

// GroupKind is the kind this webhook reviews; denials name it, as the API
// server's 422 for an invalid DNS does.
var GroupKind = schema.GroupKind{Group: operatorv1.GroupName, Kind: "DNS"}

// Resource is the resource the webhook configuration routes here.
var Resource = metav1.GroupVersionResource{Group: operatorv1.GroupName, Version: "v1", Resource: "dnses"}

// Validator reviews DNS objects with the rules of a cluster whose cluster
// domain is ClusterDomain ("" is cluster.local) and whose DNS serves on
// OwnAddresses (none: the forwarding-loop rule is off, as on a dnsplane
// API server that does not know them).
type Validator struct {
	ClusterDomain string
	OwnAddresses  []netip.AddrPort
}

// NewValidator is the Validator of `dnsplane webhook`: the cluster
// domain of its --cluster-domain, and as own addresses port 53 of its
// --cluster-dns (the cluster DNS Service) and --node-cache addresses (the
// node cache forwards to the cluster DNS), which no forwarder may name:
// the same rule dnsplane's API server applies with the addresses it
// knows (docs/dns-operator.md, "Forwarding loops").
func NewValidator(clusterDomain string, clusterDNS, nodeCache []string) (Validator, error) {
	v := Validator{ClusterDomain: clusterDomain}
	for _, s := range append(append([]string(nil), clusterDNS...), nodeCache...) {
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return Validator{}, fmt.Errorf("own DNS address %q: %w", s, err)
		}
		v.OwnAddresses = append(v.OwnAddresses, netip.AddrPortFrom(addr.Unmap(), dnsspec.DNSPort))
	}
	return v, nil
}

// Review reviews req with a Validator of the default cluster domain and
// no own addresses.
func Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return Validator{}.Review(ctx, req)
}

// Review allows a DNS create or update that dnsplane's API server would
// store, and denies one it would refuse with the server's 422: the
// causes name each field. Anything else it cannot review (another kind, an
// object that does not decode) is denied with a 400 saying why; other
// operations (DELETE, CONNECT) are allowed, as the server has no rule for
// them.
func (v Validator) Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req == nil {
		return deny("", http.StatusBadRequest, "no admission request to review")
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	}
	if gk := (schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}); gk != GroupKind {
		return deny(req.UID, http.StatusBadRequest, fmt.Sprintf("this webhook reviews %s objects, not %s", GroupKind, gk))
	}
	if req.SubResource != "" {
		// Status writes carry the spec as stored, and the server's update
		// rules pass an unchanged spec (ratcheting): nothing to check.
		return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	}
	obj, err := decode(req.Object.Raw)
	if err != nil {
		return deny(req.UID, http.StatusBadRequest, fmt.Sprintf("decoding the DNS object: %v", err))
	}
	strategy := dnsregistry.New(v.ClusterDomain)
	if len(v.OwnAddresses) > 0 {
		own := v.OwnAddresses
		strategy.OwnAddresses = func() []netip.AddrPort { return own }
	}
	var errs field.ErrorList
	if req.Operation == admissionv1.Create {
		strategy.PrepareForCreate(ctx, obj)
		errs = strategy.Validate(ctx, obj)
	} else {
		old, err := decode(req.OldObject.Raw)
		if err != nil {
			return deny(req.UID, http.StatusBadRequest, fmt.Sprintf("decoding the stored DNS object (oldObject): %v", err))
		}
		// Defaults on both sides, as the server compares a defaulted
		// update with the stored (defaulted) object.
		strategy.PrepareForUpdate(ctx, old, old)
		strategy.PrepareForUpdate(ctx, obj, old)
		errs = strategy.ValidateUpdate(ctx, obj, old)
	}
	if len(errs) > 0 {
		status := apierrors.NewInvalid(GroupKind, obj.Name, errs).Status()
		return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: false, Result: &status}
	}
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
}

// decode reads a DNS object of operator.dnsplane.io/v1 from JSON.
// Unknown fields are ignored: the API server has pruned them already.
func decode(raw []byte) (*operatorv1.DNS, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("the request has no object")
	}
	var obj operatorv1.DNS
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if gvk := obj.GroupVersionKind(); gvk != operatorv1.SchemeGroupVersion.WithKind(GroupKind.Kind) {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s, kind %s", obj.APIVersion, obj.Kind,
			operatorv1.SchemeGroupVersion, GroupKind.Kind)
	}
	return &obj, nil
}

func deny(uid types.UID, code int32, msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: uid, Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: metav1.StatusReasonBadRequest, Message: msg,
	}}
}
