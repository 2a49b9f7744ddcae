package upstream

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	admissionregistrationv1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1beta1"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	appsv1beta1 "k8s.io/kubernetes/pkg/apis/apps/v1beta1"
	appsv1beta2 "k8s.io/kubernetes/pkg/apis/apps/v1beta2"
	"k8s.io/kubernetes/pkg/apis/authentication"
	authenticationv1 "k8s.io/kubernetes/pkg/apis/authentication/v1"
	authenticationv1alpha1 "k8s.io/kubernetes/pkg/apis/authentication/v1alpha1"
	authenticationv1beta1 "k8s.io/kubernetes/pkg/apis/authentication/v1beta1"
	"k8s.io/kubernetes/pkg/apis/authorization"
	authorizationv1 "k8s.io/kubernetes/pkg/apis/authorization/v1"
	authorizationv1beta1 "k8s.io/kubernetes/pkg/apis/authorization/v1beta1"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingv1 "k8s.io/kubernetes/pkg/apis/autoscaling/v1"
	autoscalingv2 "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchv1 "k8s.io/kubernetes/pkg/apis/batch/v1"
	batchv1beta1 "k8s.io/kubernetes/pkg/apis/batch/v1beta1"
	"k8s.io/kubernetes/pkg/apis/certificates"
	certificatesv1 "k8s.io/kubernetes/pkg/apis/certificates/v1"
	certificatesv1alpha1 "k8s.io/kubernetes/pkg/apis/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/kubernetes/pkg/apis/certificates/v1beta1"
	"k8s.io/kubernetes/pkg/apis/coordination"
	coordinationv1 "k8s.io/kubernetes/pkg/apis/coordination/v1"
	coordinationv1alpha2 "k8s.io/kubernetes/pkg/apis/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/kubernetes/pkg/apis/coordination/v1beta1"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/discovery"
	discoveryv1 "k8s.io/kubernetes/pkg/apis/discovery/v1"
	discoveryv1beta1 "k8s.io/kubernetes/pkg/apis/discovery/v1beta1"
	"k8s.io/kubernetes/pkg/apis/events"
	eventsv1 "k8s.io/kubernetes/pkg/apis/events/v1"
	eventsv1beta1 "k8s.io/kubernetes/pkg/apis/events/v1beta1"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingv1 "k8s.io/kubernetes/pkg/apis/networking/v1"
	networkingv1beta1 "k8s.io/kubernetes/pkg/apis/networking/v1beta1"
	"k8s.io/kubernetes/pkg/apis/policy"
	policyv1 "k8s.io/kubernetes/pkg/apis/policy/v1"
	policyv1beta1 "k8s.io/kubernetes/pkg/apis/policy/v1beta1"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacv1 "k8s.io/kubernetes/pkg/apis/rbac/v1"
	rbacv1alpha1 "k8s.io/kubernetes/pkg/apis/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/kubernetes/pkg/apis/rbac/v1beta1"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcev1 "k8s.io/kubernetes/pkg/apis/resource/v1"
	resourcev1alpha3 "k8s.io/kubernetes/pkg/apis/resource/v1alpha3"
	resourcev1beta1 "k8s.io/kubernetes/pkg/apis/resource/v1beta1"
	resourcev1beta2 "k8s.io/kubernetes/pkg/apis/resource/v1beta2"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	schedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	schedulingv1alpha3 "k8s.io/kubernetes/pkg/apis/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/kubernetes/pkg/apis/scheduling/v1beta1"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagev1 "k8s.io/kubernetes/pkg/apis/storage/v1"
	storagev1alpha1 "k8s.io/kubernetes/pkg/apis/storage/v1alpha1"
	storagev1beta1 "k8s.io/kubernetes/pkg/apis/storage/v1beta1"
	"k8s.io/kubernetes/pkg/apis/storagemigration"
	storagemigrationv1 "k8s.io/kubernetes/pkg/apis/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/kubernetes/pkg/apis/storagemigration/v1beta1"
)

// group is what k8s.io/kubernetes/pkg/apis/<group>/install.Install puts in
// a scheme: the internal types, every version with its defaulting,
// conversion and declarative validation, and the versions' priority.
type group struct {
	add      []func(*runtime.Scheme) error
	priority []schema.GroupVersion
}

// scheme holds what legacyscheme.Scheme holds in kube-apiserver for the
// groups dnsplane serves, built on first use. The install packages build it
// in their init, which every dnsplane process would run: the cluster DNS and
// node cache never default, convert or validate an object, yet paid for six
// groups' generated conversions, defaults and validations (450 kB
// allocated, and the code and tables it touches in RSS: docs/operations.md,
// "Memory of the data plane"). TestInitBudget in cmd/dnsplane keeps the
// install packages out of the binary; TestSchemeIsInstalls here keeps this
// list equal to what they install.
var scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, g := range []group{
		{[]func(*runtime.Scheme) error{core.AddToScheme, corev1.AddToScheme},
			[]schema.GroupVersion{corev1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{apps.AddToScheme, appsv1beta1.AddToScheme, appsv1beta2.AddToScheme, appsv1.AddToScheme},
			[]schema.GroupVersion{appsv1.SchemeGroupVersion, appsv1beta2.SchemeGroupVersion, appsv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{batch.AddToScheme, batchv1.AddToScheme, batchv1beta1.AddToScheme},
			[]schema.GroupVersion{batchv1.SchemeGroupVersion, batchv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{coordination.AddToScheme, coordinationv1alpha2.AddToScheme, coordinationv1beta1.AddToScheme, coordinationv1.AddToScheme},
			[]schema.GroupVersion{coordinationv1.SchemeGroupVersion, coordinationv1beta1.SchemeGroupVersion, coordinationv1alpha2.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{discovery.AddToScheme, discoveryv1beta1.AddToScheme, discoveryv1.AddToScheme},
			[]schema.GroupVersion{discoveryv1.SchemeGroupVersion, discoveryv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{events.AddToScheme, eventsv1beta1.AddToScheme, eventsv1.AddToScheme},
			[]schema.GroupVersion{eventsv1.SchemeGroupVersion, eventsv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{autoscaling.AddToScheme, autoscalingv2.AddToScheme, autoscalingv1.AddToScheme},
			[]schema.GroupVersion{autoscalingv2.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{certificates.AddToScheme, certificatesv1.AddToScheme, certificatesv1beta1.AddToScheme, certificatesv1alpha1.AddToScheme},
			[]schema.GroupVersion{certificatesv1.SchemeGroupVersion, certificatesv1beta1.SchemeGroupVersion, certificatesv1alpha1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{networking.AddToScheme, networkingv1.AddToScheme, networkingv1beta1.AddToScheme},
			[]schema.GroupVersion{networkingv1.SchemeGroupVersion, networkingv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{policy.AddToScheme, policyv1beta1.AddToScheme, policyv1.AddToScheme},
			[]schema.GroupVersion{policyv1.SchemeGroupVersion, policyv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{scheduling.AddToScheme, schedulingv1.AddToScheme, schedulingv1beta1.AddToScheme, schedulingv1alpha3.AddToScheme},
			[]schema.GroupVersion{schedulingv1.SchemeGroupVersion, schedulingv1beta1.SchemeGroupVersion, schedulingv1alpha3.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{storage.AddToScheme, storagev1.AddToScheme, storagev1beta1.AddToScheme, storagev1alpha1.AddToScheme},
			[]schema.GroupVersion{storagev1.SchemeGroupVersion, storagev1beta1.SchemeGroupVersion, storagev1alpha1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{rbac.AddToScheme, rbacv1.AddToScheme, rbacv1beta1.AddToScheme, rbacv1alpha1.AddToScheme},
			[]schema.GroupVersion{rbacv1.SchemeGroupVersion, rbacv1beta1.SchemeGroupVersion, rbacv1alpha1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{resource.AddToScheme, resourcev1alpha3.AddToScheme, resourcev1beta1.AddToScheme, resourcev1beta2.AddToScheme, resourcev1.AddToScheme},
			[]schema.GroupVersion{resourcev1.SchemeGroupVersion, resourcev1beta2.SchemeGroupVersion, resourcev1beta1.SchemeGroupVersion, resourcev1alpha3.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{admissionregistration.AddToScheme, admissionregistrationv1beta1.AddToScheme, admissionregistrationv1alpha1.AddToScheme, admissionregistrationv1.AddToScheme},
			[]schema.GroupVersion{admissionregistrationv1.SchemeGroupVersion, admissionregistrationv1beta1.SchemeGroupVersion, admissionregistrationv1alpha1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{authorization.AddToScheme, authorizationv1beta1.AddToScheme, authorizationv1.AddToScheme},
			[]schema.GroupVersion{authorizationv1.SchemeGroupVersion, authorizationv1beta1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{authentication.AddToScheme, authenticationv1beta1.AddToScheme, authenticationv1alpha1.AddToScheme, authenticationv1.AddToScheme},
			[]schema.GroupVersion{authenticationv1.SchemeGroupVersion, authenticationv1beta1.SchemeGroupVersion, authenticationv1alpha1.SchemeGroupVersion}},
		{[]func(*runtime.Scheme) error{storagemigration.AddToScheme, storagemigrationv1beta1.AddToScheme, storagemigrationv1.AddToScheme},
			[]schema.GroupVersion{storagemigrationv1.SchemeGroupVersion, storagemigrationv1beta1.SchemeGroupVersion}},
	} {
		for _, add := range g.add {
			utilruntime.Must(add(s))
		}
		utilruntime.Must(s.SetVersionPriority(g.priority...))
	}
	return s
})
