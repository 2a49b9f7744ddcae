package registry

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// status is obj's Status field, invalid when the kind has none.
func status(obj any) reflect.Value { return reflect.ValueOf(obj).Elem().FieldByName("Status") }

// mark sets one leaf of v (depth first: a string, number or bool; slices
// get one element, pointers a value) to a non-zero value derived from tag,
// and reports whether it found one.
func mark(v reflect.Value, tag int) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint("marker-", tag))
		return true
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(tag))
		return true
	case reflect.Bool:
		v.SetBool(true)
		return true
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if mark(p.Elem(), tag) {
			v.Set(p)
			return true
		}
	case reflect.Slice:
		e := reflect.New(v.Type().Elem()).Elem()
		if mark(e, tag) {
			v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), e))
			return true
		}
	case reflect.Map:
		// One entry with a marked key (a ResourceQuota's status is two
		// resource lists, whose quantities have no exported fields).
		if v.Type().Key().Kind() == reflect.String {
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.ValueOf(fmt.Sprint("marker-", tag)).Convert(v.Type().Key()), reflect.New(v.Type().Elem()).Elem())
			v.Set(m)
			return true
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && v.Field(i).Kind() != reflect.Map && mark(v.Field(i), tag) {
				return true
			}
		}
		// Maps only when nothing else can be marked: defaulting copies
		// some (a Node's capacity to allocatable).
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && v.Field(i).Kind() == reflect.Map && mark(v.Field(i), tag) {
				return true
			}
		}
	}
	return false
}

// TestEveryKindHasAStrategy: each row of api.Resources has exactly one
// strategy and no strategy names a kind the table lacks, so adding a kind
// without its strategy fails here. The versions of one kind
// (autoscaling/v1 and v2 HorizontalPodAutoscalers) share its strategy.
func TestEveryKindHasAStrategy(t *testing.T) {
	strategies := Strategies(Config{})
	seen := map[schema.GroupKind]bool{}
	for _, r := range api.Resources() {
		s, ok := strategies[r.GVK.GroupKind()]
		if !ok {
			t.Errorf("%s has no strategy", r.GVK.GroupKind())
			continue
		}
		seen[r.GVK.GroupKind()] = true
		// rest.Default validates metadata itself, with the scope it is told.
		if d, ok := s.(rest.Default); ok && d.Namespaced != r.Namespaced {
			t.Errorf("%s: rest.Default{Namespaced: %v} for a kind with Namespaced %v", r.GVK.Kind, d.Namespaced, r.Namespaced)
		}
	}
	if len(seen) != len(strategies) {
		t.Errorf("%d strategies for %d kinds: some name a kind api.Resources does not serve", len(strategies), len(seen))
	}
}

// TestStatusSubresourceSplit: a kind has a Status field exactly when it
// has a status subresource; its strategy ignores the status a client sends
// on create (except Node, which registers with its own; a Namespace starts
// Active whatever was sent, as upstream's strategy) and keeps the stored
// one on update.
func TestStatusSubresourceSplit(t *testing.T) {
	strategies := Strategies(Config{})
	keepsOnCreate := map[string]bool{"Node": true}
	ctx := context.Background()
	for _, r := range api.Resources() {
		s := strategies[r.GVK.GroupKind()]
		if has := status(r.New()).IsValid(); has != r.HasSubresource("status") {
			t.Errorf("%s: Status field %v, status subresource %v", r.GVK.Kind, has, r.HasSubresource("status"))
			continue
		}
		if !r.HasSubresource("status") {
			continue
		}
		obj := r.New()
		if !mark(status(obj), 1) {
			t.Fatalf("%s: nothing to set in the status", r.GVK.Kind)
		}
		sent := reflect.ValueOf(status(obj).Interface())
		s.PrepareForCreate(ctx, obj)
		kept := reflect.DeepEqual(status(obj).Interface(), sent.Interface())
		if kept != keepsOnCreate[r.GVK.Kind] {
			t.Errorf("%s: create kept the client's status = %v, want %v", r.GVK.Kind, kept, keepsOnCreate[r.GVK.Kind])
		}
		old, obj := r.New(), r.New()
		mark(status(old), 2)
		mark(status(obj), 3)
		s.PrepareForUpdate(ctx, obj, old)
		if !reflect.DeepEqual(status(obj).Interface(), status(old).Interface()) {
			t.Errorf("%s: update changed the status to %+v, want the stored %+v", r.GVK.Kind, status(obj).Interface(), status(old).Interface())
		}
	}
}

// TestPodTemplateCarriersValidateDNS: every kind whose objects carry a pod
// spec applies the pod DNS rules to it, on create and on update.
func TestPodTemplateCarriersValidateDNS(t *testing.T) {
	strategies := Strategies(Config{DNS: validation.Options{PodDNSCustomPolicy: true}})
	carriers := 0
	for _, r := range api.Resources() {
		obj := r.New()
		if rc, ok := obj.(*dpcorev1.ReplicationController); ok {
			rc.Spec.Template = &dpcorev1.PodTemplateSpec{} // optional in the type
		}
		specs := api.PodSpecs(obj)
		if len(specs) == 0 {
			continue
		}
		carriers++
		for _, at := range specs {
			at.Spec.DNSPolicy = corev1.DNSNone // None without dnsConfig nameservers is invalid
		}
		s := strategies[r.GVK.GroupKind()]
		if errs := s.Validate(context.Background(), obj); len(errs) == 0 {
			t.Errorf("%s: dnsPolicy None without nameservers passed Validate", r.GVK.Kind)
		}
		if errs := s.ValidateUpdate(context.Background(), obj, r.New()); len(errs) == 0 {
			t.Errorf("%s: dnsPolicy None without nameservers passed ValidateUpdate", r.GVK.Kind)
		}
	}
	if carriers != 9 {
		t.Errorf("%d pod template carriers, want 9", carriers)
	}
}
