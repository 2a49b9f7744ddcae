package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// The generated DeepCopyObject of every dnsplane kind and its List, filled
// at random, must return an equal object that shares no memory with the
// original: the embedded upstream structs copy themselves, and the
// redeclared template fields are copied besides them.
func TestDeepCopyIsDeepAndEqual(t *testing.T) {
	s := ourScheme(t)
	for gvk := range s.AllKnownTypes() {
		obj, err := s.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if !ours(obj) {
			continue
		}
		t.Run(gvk.Kind, func(t *testing.T) {
			for seed := range int64(20) {
				f := randfill.NewWithSeed(seed).NilChance(0.2).NumElements(1, 2)
				f.Fill(obj)
				cp := obj.DeepCopyObject()
				if !reflect.DeepEqual(obj, cp) {
					t.Fatalf("seed %d: copy differs:\n%s\n%s", seed, mustJSON(t, obj), mustJSON(t, cp))
				}
				if p := sharedMemory(obj, cp); p != "" {
					t.Fatalf("seed %d: the copy shares %s with the original", seed, p)
				}
			}
		})
	}
}

// The bug the types exist for: a copy that lost or aliased spec.dnsParams.
// For every pod template carrier, a copy's dnsParams and containers can be
// changed without touching the original.
func TestDeepCopyKeepsDNSParams(t *testing.T) {
	const spec = `{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)"],"options":["ndots:2"]}},"containers":[{"name":"c","image":"i"}]}`
	tmpl := `{"template":{"spec":` + spec + `}}`
	cases := []struct{ kind, doc string }{
		{"Pod", `{"spec":` + spec + `}`},
		{"PodTemplate", tmpl},
		{"ReplicationController", `{"spec":` + tmpl + `}`},
		{"Deployment", `{"spec":` + tmpl + `}`},
		{"ReplicaSet", `{"spec":` + tmpl + `}`},
		{"StatefulSet", `{"spec":` + tmpl + `}`},
		{"DaemonSet", `{"spec":` + tmpl + `}`},
		{"Job", `{"spec":` + tmpl + `}`},
		{"CronJob", `{"spec":{"jobTemplate":{"spec":` + tmpl + `}}}`},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			r := resourceByKind(t, c.kind)
			obj := r.New().(runtime.Object)
			if err := json.Unmarshal([]byte(c.doc), obj); err != nil {
				t.Fatal(err)
			}
			cp := obj.DeepCopyObject()
			got := PodSpecs(cp)
			if len(got) != 1 || got[0].Spec.DNSParams == nil || got[0].Spec.DNSParams.Custom == nil {
				t.Fatalf("the copy lost dnsParams: %s", mustJSON(t, cp))
			}
			got[0].Spec.DNSParams.Custom.Search[0] = "changed"
			got[0].Spec.DNSParams.Custom.Options = nil
			got[0].Spec.Containers[0].Name = "changed"
			orig := PodSpecs(obj)[0].Spec
			if orig.DNSParams.Custom.Search[0] != "$(NAMESPACE).svc.$(CLUSTER)" || len(orig.DNSParams.Custom.Options) != 1 ||
				orig.Containers[0].Name != "c" {
				t.Errorf("changing the copy changed the original: %s", mustJSON(t, obj))
			}
		})
	}
}

func resourceByKind(t *testing.T, kind string) Resource {
	t.Helper()
	for _, r := range Resources() {
		if r.GVK.Kind == kind && ours(r.New()) {
			return r
		}
	}
	t.Fatalf("no dnsplane kind %s", kind)
	return Resource{}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sharedMemory returns the path of the first pointer, map or slice backing
// array of b that is also one of a's, or "" when they share none. Strings
// and a time.Time's *time.Location are immutable, so sharing them is fine
// and they are not looked at.
func sharedMemory(a, b any) string {
	seen := map[uintptr]bool{}
	walk(reflect.ValueOf(a), "", func(v reflect.Value, _ string) bool {
		seen[v.Pointer()] = true
		return false
	})
	var found string
	walk(reflect.ValueOf(b), "", func(v reflect.Value, path string) bool {
		if seen[v.Pointer()] {
			found = fmt.Sprintf("%s (%s)", path, v.Type())
			return true
		}
		return false
	})
	return found
}

// walk calls fn on every non-nil pointer, map and slice with a backing array
// under v, depth first, until fn returns true. Pointers to zero-size values
// are skipped: Go may give distinct ones the same address.
func walk(v reflect.Value, path string, fn func(v reflect.Value, path string) bool) bool {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return false
		}
		if v.Type() == reflect.TypeFor[*time.Location]() {
			return false
		}
		if v.Type().Elem().Size() > 0 && fn(v, path) {
			return true
		}
		return walk(v.Elem(), path, fn)
	case reflect.Interface:
		return !v.IsNil() && walk(v.Elem(), path, fn)
	case reflect.Struct:
		for i := range v.NumField() {
			if walk(v.Field(i), path+"."+v.Type().Field(i).Name, fn) {
				return true
			}
		}
	case reflect.Slice:
		if v.Cap() > 0 && v.Type().Elem().Size() > 0 && fn(v, path) {
			return true
		}
		for i := range v.Len() {
			if walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn) {
				return true
			}
		}
	case reflect.Map:
		if v.IsNil() {
			return false
		}
		if fn(v, path) {
			return true
		}
		for it := v.MapRange(); it.Next(); {
			if walk(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), fn) {
				return true
			}
		}
	default:
	}
	return false
}
