package upstream

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	admissionregistrationinstall "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	appsinstall "k8s.io/kubernetes/pkg/apis/apps/install"
	authenticationinstall "k8s.io/kubernetes/pkg/apis/authentication/install"
	authorizationinstall "k8s.io/kubernetes/pkg/apis/authorization/install"
	autoscalinginstall "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	batchinstall "k8s.io/kubernetes/pkg/apis/batch/install"
	certificatesinstall "k8s.io/kubernetes/pkg/apis/certificates/install"
	coordinationinstall "k8s.io/kubernetes/pkg/apis/coordination/install"
	coreinstall "k8s.io/kubernetes/pkg/apis/core/install"
	discoveryinstall "k8s.io/kubernetes/pkg/apis/discovery/install"
	eventsinstall "k8s.io/kubernetes/pkg/apis/events/install"
	networkinginstall "k8s.io/kubernetes/pkg/apis/networking/install"
	policyinstall "k8s.io/kubernetes/pkg/apis/policy/install"
	rbacinstall "k8s.io/kubernetes/pkg/apis/rbac/install"
	resourceinstall "k8s.io/kubernetes/pkg/apis/resource/install"
	schedulinginstall "k8s.io/kubernetes/pkg/apis/scheduling/install"
	storageinstall "k8s.io/kubernetes/pkg/apis/storage/install"
	storagemigrationinstall "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

// TestSchemeIsInstalls checks that scheme holds what upstream's install
// packages put in legacyscheme.Scheme for the same groups (the tests may
// link them; the binary must not): the same kinds with the same Go types,
// the same version priorities, and the same defaulting.
func TestSchemeIsInstalls(t *testing.T) {
	t.Parallel()
	want := runtime.NewScheme()
	for _, install := range []func(*runtime.Scheme){
		coreinstall.Install, appsinstall.Install, batchinstall.Install,
		coordinationinstall.Install, discoveryinstall.Install, eventsinstall.Install,
		storageinstall.Install, rbacinstall.Install, resourceinstall.Install,
		autoscalinginstall.Install, certificatesinstall.Install, networkinginstall.Install, policyinstall.Install, schedulinginstall.Install,
		admissionregistrationinstall.Install, storagemigrationinstall.Install, authorizationinstall.Install,
		authenticationinstall.Install,
	} {
		install(want)
	}
	got := scheme()
	if g, w := got.AllKnownTypes(), want.AllKnownTypes(); !reflect.DeepEqual(g, w) {
		for gvk, typ := range w {
			if g[gvk] != typ {
				t.Errorf("%v: got %v, want %v", gvk, g[gvk], typ)
			}
		}
		for gvk := range g {
			if _, ok := w[gvk]; !ok {
				t.Errorf("%v: registered here, not by the install packages", gvk)
			}
		}
	}
	for _, group := range []string{"", "apps", "batch", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
		"admissionregistration.k8s.io", "storagemigration.k8s.io", "autoscaling", "authorization.k8s.io", "authentication.k8s.io"} {
		if g, w := got.PrioritizedVersionsForGroup(group), want.PrioritizedVersionsForGroup(group); len(w) == 0 || !reflect.DeepEqual(g, w) {
			t.Errorf("version priorities of group %q: got %v, want %v", group, g, w)
		}
	}
	// Defaulting and conversion functions cannot be compared; one object
	// through both shows they are there.
	for name, s := range map[string]*runtime.Scheme{"scheme()": got, "install": want} {
		pod := &corev1.Pod{}
		s.Default(pod)
		if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			t.Errorf("%s: defaulted pod has restartPolicy %q, want Always", name, pod.Spec.RestartPolicy)
		}
	}
}
