// Package event is the strategy of core/v1 Events: upstream's validation
// with the legacy (core/v1) rules, and the field selectors kubectl describe
// and `kubectl events --for` use to find an object's events
// (involvedObject.*, reason, type, …), as upstream's event registry offers
// them (pkg/registry/core/event/strategy.go, ToSelectableFields).
//
// The mapping is written here rather than imported: upstream's lives in its
// registry package, whose import pulls in kube-apiserver's storage stack
// (docs/architecture.md, "Resources and strategies").
package event

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the core/v1 Event strategy.
type Strategy struct{ upstream.Strategy[core.Event] }

var (
	_ rest.Strategy        = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// New returns the core/v1 Event strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[core.Event]{
		Default: rest.Default{Namespaced: true, GarbageCollection: genericrest.Unsupported},
		Rules: upstream.Rules[core.Event]{
			// The request's group version picks upstream's rules: core/v1
			// writes get the legacy ones.
			Validate: func(e *core.Event) field.ErrorList {
				return corevalidation.ValidateEventCreate(e, corev1.SchemeGroupVersion)
			},
			ValidateUpdate: func(e, old *core.Event) field.ErrorList {
				return corevalidation.ValidateEventUpdate(e, old, corev1.SchemeGroupVersion)
			},
		},
	}}
}

// SelectableFields are the event fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string {
	return []string{
		"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type",
	}
}

// FieldSet returns the selectable fields of an event. source is
// source.component, or the reporting controller when that is unset, as
// upstream chooses.
func (Strategy) FieldSet(obj any) fields.Set {
	e := obj.(*corev1.Event)
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}
