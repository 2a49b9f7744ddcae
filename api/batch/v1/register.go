package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of this package's kinds.
const GroupName = "batch"

// SchemeGroupVersion is the group and version this package's kinds are
// registered under.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// Kind takes an unqualified kind and returns it qualified by this package's
// group.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource (a plural) and returns it qualified
// by this package's group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that add this package's kinds
	// to a scheme. Only hand-written registration is here; the generated
	// deep copies need none.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's kinds to a scheme. The generated
	// clientset's scheme (api/client/clientset/versioned/scheme) calls it.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind with its List type, and the meta/v1
// options types (ListOptions, GetOptions, …) a client sends to this group
// version.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Job{},
		&JobList{},
		&CronJob{},
		&CronJobList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
