package api

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestPodSpecsCoversEveryCarrier(t *testing.T) {
	want := map[string]string{
		"Pod":                   "spec",
		"PodTemplate":           "template.spec",
		"ReplicationController": "spec.template.spec",
		"Deployment":            "spec.template.spec",
		"ReplicaSet":            "spec.template.spec",
		"StatefulSet":           "spec.template.spec",
		"DaemonSet":             "spec.template.spec",
		"Job":                   "spec.template.spec",
		"CronJob":               "spec.jobTemplate.spec.template.spec",
	}
	for _, gvk := range Kinds() {
		obj, _ := New(gvk)
		if gvk.Kind == "ReplicationController" {
			// The template is optional there; a decoded manifest sets it.
			if err := decodeJSON([]byte(`{"spec":{"template":{}}}`), obj); err != nil {
				t.Fatal(err)
			}
		}
		specs := PodSpecs(obj)
		path, carrier := want[gvk.Kind]
		if !carrier {
			if len(specs) != 0 {
				t.Errorf("%s: got %d pod specs, want none", gvk.Kind, len(specs))
			}
			continue
		}
		if len(specs) != 1 || specs[0].Path.String() != path {
			t.Errorf("%s: got %v, want one spec at %s", gvk.Kind, specs, path)
			continue
		}
		// The metadata that goes with the spec: the template's, or the
		// Pod's own.
		meta := strings.TrimSuffix(path, "spec") + "metadata"
		if specs[0].Meta == nil || specs[0].MetaPath.String() != meta {
			t.Errorf("%s: metadata at %v (%p), want %s", gvk.Kind, specs[0].MetaPath, specs[0].Meta, meta)
		}
		delete(want, gvk.Kind)
	}
	if len(want) != 0 {
		t.Errorf("carriers missing from Kinds(): %v", want)
	}
}

func TestNewUnknownKind(t *testing.T) {
	if _, ok := New(schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Deployment"}); ok {
		t.Fatal("extensions/v1beta1 Deployment should be unknown")
	}
}
