package priority

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	"k8s.io/utils/ptr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// The resources the cases write, at the versions dnsplane serves.
var (
	podsGVR            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	priorityClassesGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	configMapsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// hosted is the plugin initialised as internal/apiserver initialises it,
// with informers of a fake clientset holding classes, synced.
func hosted(t testing.TB, classes ...*schedulingv1.PriorityClass) *Plugin {
	t.Helper()
	p, f := initialised(t, classes...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	return p
}

// initialised is the plugin with its informer registered, not started.
func initialised(t testing.TB, classes ...*schedulingv1.PriorityClass) (*Plugin, informers.SharedInformerFactory) {
	t.Helper()
	var objs []runtime.Object
	for _, pc := range classes {
		objs = append(objs, pc)
	}
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	p := New()
	initializer.New(client, nil, f, nil, nil, nil, nil, nil).Initialize(p)
	if err := admission.ValidateInitialization(p); err != nil {
		t.Fatal(err)
	}
	return p, f
}

// system are kube's two system classes, as every API server creates and
// serves them (internal/controlplane's bootstrap), defaulted.
func system() []*schedulingv1.PriorityClass {
	var out []*schedulingv1.PriorityClass
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		out = append(out, class(pc.Name, pc.Value, pc.GlobalDefault, nil))
	}
	return out
}

// class is a PriorityClass as the API server serves it: its
// preemptionPolicy defaults to PreemptLowerPriority (upstream's
// SetDefaults_PriorityClass).
func class(name string, value int32, globalDefault bool, policy *corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	if policy == nil {
		policy = ptr.To(corev1.PreemptLowerPriority)
	}
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault, PreemptionPolicy: policy}
}

// pod is a served pod with what upstream's plugin must leave alone:
// labels, containers, status and dnsParams.
func pod(className string) *dpcorev1.Pod {
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"app": "a"}}}
	p.Spec.PriorityClassName = className
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	p.Spec.DNSPolicy = dpcorev1.DNSCustom
	p.Spec.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"$(NAMESPACE).svc.$(CLUSTER)"}}}
	p.Status.Phase = corev1.PodPending
	return p
}

func record(op admission.Operation, gvr schema.GroupVersionResource, subresource string, obj, old runtime.Object) admission.Attributes {
	name := ""
	if obj != nil {
		name = obj.(metav1.Object).GetName()
	}
	return admission.NewAttributesRecord(obj, old, schema.GroupVersionKind{}, "default", name, gvr, subresource, op, nil, false, nil)
}

// checkErr fails unless err is nil (want "") or a 403 whose message has
// want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want == "":
	case err == nil:
		t.Fatalf("allowed, want a 403 with %q", want)
	case !apierrors.IsForbidden(err):
		t.Fatalf("got %v, want a 403", err)
	case !strings.Contains(err.Error(), want):
		t.Fatalf("got %v, want %q", err, want)
	}
}

// TestAdmitPod: a pod create gets its class's priority and preemption
// policy (the named one, else the globalDefault one, else 0 and
// PreemptLowerPriority), with upstream's 403s for an unknown class and a
// priority that disagrees; an update keeps the stored priority; only the
// three fields change.
func TestAdmitPod(t *testing.T) {
	t.Parallel()
	never := ptr.To(corev1.PreemptNever)
	lower := ptr.To(corev1.PreemptLowerPriority)
	withDefault := hosted(t, append(system(), class("low", 100, true, nil), class("batch", 10, false, never))...)
	withoutDefault := hosted(t, system()...)
	withPriority := func(className string, priority int32, policy *corev1.PreemptionPolicy) *dpcorev1.Pod {
		p := pod(className)
		p.Spec.Priority = &priority
		p.Spec.PreemptionPolicy = policy
		return p
	}
	for _, tc := range []struct {
		name   string
		plugin *Plugin
		op     admission.Operation
		obj    *dpcorev1.Pod
		old    *dpcorev1.Pod
		// want is the pod as admitted, or want403 a substring of the 403.
		want    *dpcorev1.Pod
		want403 string
	}{
		{name: "named class", plugin: withDefault, op: admission.Create, obj: pod("system-cluster-critical"),
			want: withPriority("system-cluster-critical", 2000000000, lower)},
		{name: "named class with PreemptNever", plugin: withDefault, op: admission.Create, obj: pod("batch"),
			want: withPriority("batch", 10, never)},
		{name: "globalDefault class", plugin: withDefault, op: admission.Create, obj: pod(""),
			want: withPriority("low", 100, lower)},
		{name: "no class and no default", plugin: withoutDefault, op: admission.Create, obj: pod(""),
			want: withPriority("", 0, lower)},
		{name: "unknown class", plugin: withDefault, op: admission.Create, obj: pod("nope"),
			want403: `pods "p" is forbidden: no PriorityClass with name nope was found`},
		{name: "priority that agrees", plugin: withDefault, op: admission.Create, obj: withPriority("batch", 10, nil),
			want: withPriority("batch", 10, never)},
		{name: "priority that disagrees", plugin: withDefault, op: admission.Create, obj: withPriority("batch", 5, nil),
			want403: "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 10 from the given PriorityClass name"},
		{name: "preemption policy that disagrees", plugin: withDefault, op: admission.Create, obj: withPriority("batch", 10, lower),
			want403: "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec"},
		{name: "update keeps the stored priority", plugin: withDefault, op: admission.Update, obj: pod("batch"), old: withPriority("batch", 10, never),
			want: withPriority("batch", 10, never)},
		{name: "update reads no class", plugin: withDefault, op: admission.Update, obj: pod("gone"), old: pod("gone"),
			want: pod("gone")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err := tc.plugin.Admit(t.Context(), record(tc.op, podsGVR, "", tc.obj, old), nil)
			checkErr(t, err, tc.want403)
			if tc.want403 != "" {
				return
			}
			if d := cmp.Diff(tc.want, tc.obj); d != "" {
				t.Fatalf("admitted pod (-want +got):\n%s", d)
			}
		})
	}
}

// TestAdmitLeavesTheRest: subresources, other kinds and PriorityClasses
// pass Admit untouched, and deletes are not handled.
func TestAdmitLeavesTheRest(t *testing.T) {
	t.Parallel()
	p := hosted(t, system()...)
	status := pod("nope")
	if err := p.Admit(t.Context(), record(admission.Update, podsGVR, "status", status, pod("nope")), nil); err != nil {
		t.Fatalf("pods/status: %v", err)
	}
	if status.Spec.Priority != nil {
		t.Fatalf("pods/status got priority %d", *status.Spec.Priority)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	if err := p.Admit(t.Context(), record(admission.Create, configMapsGVR, "", cm, nil), nil); err != nil {
		t.Fatalf("configmap: %v", err)
	}
	if err := p.Admit(t.Context(), record(admission.Create, priorityClassesGVR, "", class("x", 1, true, nil), nil), nil); err != nil {
		t.Fatalf("priorityclass: %v", err)
	}
	if p.Handles(admission.Delete) || p.Handles(admission.Connect) || !p.Handles(admission.Create) || !p.Handles(admission.Update) {
		t.Fatal("handles other than create and update")
	}
}

// TestValidatePriorityClass: one globalDefault class at a time, upstream's
// 403 otherwise.
func TestValidatePriorityClass(t *testing.T) {
	t.Parallel()
	withDefault := hosted(t, append(system(), class("low", 100, true, nil), class("high", 1000, false, nil))...)
	withoutDefault := hosted(t, system()...)
	for _, tc := range []struct {
		name    string
		plugin  *Plugin
		op      admission.Operation
		obj     *schedulingv1.PriorityClass
		want403 string
	}{
		{"second globalDefault", withDefault, admission.Create, class("other", 5, true, nil),
			`priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist`},
		{"another class made globalDefault", withDefault, admission.Update, class("high", 1000, true, nil),
			"PriorityClass low is already marked as default"},
		{"the default updated", withDefault, admission.Update, class("low", 100, true, nil), ""},
		{"a class that is not default", withDefault, admission.Create, class("other", 5, false, nil), ""},
		{"first globalDefault", withoutDefault, admission.Create, class("low", 100, true, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var old runtime.Object
			if tc.op == admission.Update {
				old = tc.obj.DeepCopy()
			}
			checkErr(t, tc.plugin.Validate(t.Context(), record(tc.op, priorityClassesGVR, "", tc.obj, old), nil), tc.want403)
		})
	}
}

// TestNotReady: before its informer has listed, a pod create waits and is
// then refused with kube's 403; what reads no class does not wait.
func TestNotReady(t *testing.T) {
	t.Parallel()
	p, _ := initialised(t, system()...) // never started
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	checkErr(t, p.Admit(ctx, record(admission.Create, podsGVR, "", pod("system-cluster-critical"), nil), nil), "not yet ready to handle request")
	// The system classes the API server ensures before its informers run.
	for _, pc := range system() {
		checkErr(t, p.Validate(t.Context(), record(admission.Create, priorityClassesGVR, "", pc, nil), nil), "")
	}
	checkErr(t, p.Admit(t.Context(), record(admission.Update, podsGVR, "", pod("x"), pod("x")), nil), "")

	uninitialised := New()
	if uninitialised.ValidateInitialization() == nil {
		t.Fatal("an uninitialised plugin validates")
	}
	checkErr(t, uninitialised.Admit(t.Context(), record(admission.Create, podsGVR, "", pod(""), nil), nil), "not yet ready to handle request")
}
