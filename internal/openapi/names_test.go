package openapi

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestDefinitionName(t *testing.T) {
	for _, tc := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[corev1.PodSpec](), "io.k8s.api.core.v1.PodSpec"},
		{reflect.TypeFor[metav1.ObjectMeta](), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		{reflect.TypeFor[intstr.IntOrString](), "io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
		{reflect.TypeFor[dpcorev1.PodSpec](), "io.dnsplane.api.core.v1.PodSpec"},
		{reflect.TypeFor[inner](), "io.dnsplane.internal.openapi.inner"},
	} {
		if got := DefinitionName(tc.t); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.t, got, tc.want)
		}
	}
}

func TestListType(t *testing.T) {
	for _, tc := range []struct {
		strategy, key string
		want          string
		keys          []string
	}{
		{"merge", "name", "map", []string{"name"}},
		{"merge,retainKeys", "name", "map", []string{"name"}},
		{"merge", "", "set", nil},
		{"retainKeys", "", "atomic", nil},
		{"", "", "atomic", nil},
		{"replace", "name", "atomic", nil},
	} {
		got, keys := listType(tc.strategy, tc.key)
		if got != tc.want || !reflect.DeepEqual(keys, tc.keys) {
			t.Errorf("%q %q: %s %v, want %s %v", tc.strategy, tc.key, got, keys, tc.want, tc.keys)
		}
	}
}

func mustGVK(gv, kind string) schema.GroupVersionKind {
	parsed, err := schema.ParseGroupVersion(gv)
	if err != nil {
		panic(err)
	}
	return parsed.WithKind(kind)
}
