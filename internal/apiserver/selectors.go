package apiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// filter is a request's label and field selectors.
type filter struct {
	labels labels.Selector
	fields fields.Selector
}

// parseFilter parses labelSelector and fieldSelector; a bad selector or a
// field the resource cannot be selected by is a 400, as upstream.
func parseFilter(res *Resource, labelSel, fieldSel string) (filter, error) {
	ls, err := labels.Parse(labelSel)
	if err != nil {
		return filter{}, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(fieldSel)
	if err != nil {
		return filter{}, apierrors.NewBadRequest(err.Error())
	}
	supported := selectableFields(res)
	for _, req := range fs.Requirements() {
		if !supported[req.Field] {
			return filter{}, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	return filter{labels: ls, fields: fs}, nil
}

func (f filter) empty() bool { return f.labels.Empty() && f.fields.Empty() }

func (f filter) matches(res *Resource, obj any) bool {
	if f.empty() {
		return true
	}
	m := accessor(obj)
	return f.labels.Matches(labels.Set(m.GetLabels())) && f.fields.Matches(fieldSet(res, obj))
}

// selectableFields lists the field selectors a resource supports: every
// resource has the metadata ones; pods add the ones kubelet and kubectl use.
func selectableFields(res *Resource) map[string]bool {
	s := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	switch res.Plural {
	case "pods":
		for _, f := range []string{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"} {
			s[f] = true
		}
	case "secrets":
		s["type"] = true
	case "namespaces":
		s["status.phase"] = true
	case "nodes":
		s["spec.unschedulable"] = true
	}
	return s
}

func fieldSet(res *Resource, obj any) fields.Set {
	m := accessor(obj)
	set := fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
	switch o := obj.(type) {
	case *corev1.Secret:
		set["type"] = string(o.Type)
	case *corev1.Namespace:
		set["status.phase"] = string(o.Status.Phase)
	case *corev1.Node:
		set["spec.unschedulable"] = fmt.Sprint(o.Spec.Unschedulable)
	case *dpcorev1.Pod:
		p := o
		set["spec.nodeName"] = p.Spec.NodeName
		set["spec.restartPolicy"] = string(p.Spec.RestartPolicy)
		set["spec.schedulerName"] = p.Spec.SchedulerName
		set["spec.serviceAccountName"] = p.Spec.ServiceAccountName
		set["spec.hostNetwork"] = fmt.Sprint(p.Spec.HostNetwork)
		set["status.phase"] = string(p.Status.Phase)
		set["status.podIP"] = p.Status.PodIP
		set["status.nominatedNodeName"] = p.Status.NominatedNodeName
	}
	return set
}
