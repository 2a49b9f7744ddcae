package apiserver

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
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
	m := store.Accessor(obj)
	return f.labels.Matches(labels.Set(m.GetLabels())) && f.fields.Matches(fieldSet(res, obj))
}

// selectableFields lists the field selectors a resource supports: every
// resource has the metadata ones, and its strategy may add its own.
func selectableFields(res *Resource) map[string]bool {
	s := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	if fs, ok := res.Strategy.(rest.FieldSelectable); ok {
		for _, f := range fs.SelectableFields() {
			s[f] = true
		}
	}
	return s
}

func fieldSet(res *Resource, obj any) fields.Set {
	m := store.Accessor(obj)
	set := fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
	if fs, ok := res.Strategy.(rest.FieldSelectable); ok {
		for k, v := range fs.FieldSet(obj) {
			set[k] = v
		}
	}
	return set
}
