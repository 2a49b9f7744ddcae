package api

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// PodSpecAt is a pod spec inside an object and the field path to it.
type PodSpecAt struct {
	Spec *dpcorev1.PodSpec
	Path *field.Path
}

// PodSpecs returns the pod specs obj carries, with their field paths rooted
// at the object (spec, template.spec, spec.template.spec,
// spec.jobTemplate.spec.template.spec). It returns nil for kinds without a
// pod spec and for a nil object. Two objects of the same type return specs in
// the same order, so callers can pair an object with its old version.
func PodSpecs(obj any) []PodSpecAt {
	spec := field.NewPath("spec")
	tmpl := spec.Child("template", "spec")
	switch o := obj.(type) {
	case *dpcorev1.Pod:
		if o != nil {
			return []PodSpecAt{{&o.Spec, spec}}
		}
	case *dpcorev1.PodTemplate:
		if o != nil {
			return []PodSpecAt{{&o.Template.Spec, field.NewPath("template", "spec")}}
		}
	case *dpcorev1.ReplicationController:
		if o != nil && o.Spec.Template != nil {
			return []PodSpecAt{{&o.Spec.Template.Spec, tmpl}}
		}
	case *dpappsv1.Deployment:
		if o != nil {
			return []PodSpecAt{{&o.Spec.Template.Spec, tmpl}}
		}
	case *dpappsv1.ReplicaSet:
		if o != nil {
			return []PodSpecAt{{&o.Spec.Template.Spec, tmpl}}
		}
	case *dpappsv1.StatefulSet:
		if o != nil {
			return []PodSpecAt{{&o.Spec.Template.Spec, tmpl}}
		}
	case *dpappsv1.DaemonSet:
		if o != nil {
			return []PodSpecAt{{&o.Spec.Template.Spec, tmpl}}
		}
	case *dpbatchv1.Job:
		if o != nil {
			return []PodSpecAt{{&o.Spec.Template.Spec, tmpl}}
		}
	case *dpbatchv1.CronJob:
		if o != nil {
			return []PodSpecAt{{&o.Spec.JobTemplate.Spec.Template.Spec, spec.Child("jobTemplate", "spec", "template", "spec")}}
		}
	}
	return nil
}
