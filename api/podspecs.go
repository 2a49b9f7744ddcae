package api

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// PodSpecAt is a pod spec inside an object and the field path to it, with
// the metadata that goes with the spec (a template's, or a Pod's own) and
// its path: the API server keeps spec.dnsParams mirrored in an annotation
// there (docs/pod-dns.md, "dnsParams and controllers").
type PodSpecAt struct {
	Spec     *dpcorev1.PodSpec
	Path     *field.Path
	Meta     *metav1.ObjectMeta
	MetaPath *field.Path
}

// PodSpecs returns the pod specs obj carries, with their field paths rooted
// at the object (spec, template.spec, spec.template.spec,
// spec.jobTemplate.spec.template.spec). It returns nil for kinds without a
// pod spec and for a nil object. Two objects of the same type return specs in
// the same order, so callers can pair an object with its old version.
func PodSpecs(obj any) []PodSpecAt {
	spec := field.NewPath("spec")
	switch o := obj.(type) {
	case *dpcorev1.Pod:
		if o != nil {
			return []PodSpecAt{{&o.Spec, spec, &o.ObjectMeta, field.NewPath("metadata")}}
		}
	case *dpcorev1.PodTemplate:
		if o != nil {
			return template(&o.Template, field.NewPath("template"))
		}
	case *dpcorev1.ReplicationController:
		if o != nil && o.Spec.Template != nil {
			return template(o.Spec.Template, spec.Child("template"))
		}
	case *dpappsv1.Deployment:
		if o != nil {
			return template(&o.Spec.Template, spec.Child("template"))
		}
	case *dpappsv1.ReplicaSet:
		if o != nil {
			return template(&o.Spec.Template, spec.Child("template"))
		}
	case *dpappsv1.StatefulSet:
		if o != nil {
			return template(&o.Spec.Template, spec.Child("template"))
		}
	case *dpappsv1.DaemonSet:
		if o != nil {
			return template(&o.Spec.Template, spec.Child("template"))
		}
	case *dpbatchv1.Job:
		if o != nil {
			return template(&o.Spec.Template, spec.Child("template"))
		}
	case *dpbatchv1.CronJob:
		if o != nil {
			return template(&o.Spec.JobTemplate.Spec.Template, spec.Child("jobTemplate", "spec", "template"))
		}
	}
	return nil
}

// template is the one pod spec of the pod template t at path.
func template(t *dpcorev1.PodTemplateSpec, path *field.Path) []PodSpecAt {
	return []PodSpecAt{{&t.Spec, path.Child("spec"), &t.ObjectMeta, path.Child("metadata")}}
}
