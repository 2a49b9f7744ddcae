package webhook

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	genericwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/cel/environment"
)

// matches evaluates condition against obj exactly as kube-apiserver's
// webhook dispatcher does: its accessor compiles the configuration's
// matchConditions with the CEL environment the generic webhook plugin
// builds, and its matcher applies failurePolicy Fail to errors.
func matches(t *testing.T, condition string, obj runtime.Object, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) bool {
	t.Helper()
	fail := admissionregistrationv1.Fail
	hook := &admissionregistrationv1.MutatingWebhook{
		Name:            "test.dns.dnsplane.io",
		FailurePolicy:   &fail,
		MatchConditions: []admissionregistrationv1.MatchCondition{{Name: MatchConditionName, Expression: condition}},
	}
	acc := genericwebhook.NewMutatingWebhookAccessor("uid", "dnsplane", hook)
	compiler := celplugin.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	m := acc.GetCompiledMatcher(compiler)
	meta := obj.(metav1.Object)
	attrs := admission.NewAttributesRecord(obj, nil, gvk, meta.GetNamespace(), meta.GetName(), gvr, "", admission.Create, &metav1.CreateOptions{}, false, nil)
	res := m.Match(context.Background(), &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(obj)}, nil, nil)
	if res.Error != nil {
		t.Fatalf("match condition on %s: %v (with failurePolicy Fail the request would be refused)", gvk.Kind, res.Error)
	}
	return res.Matches
}

func podSpec(policy corev1.DNSPolicy) corev1.PodSpec {
	return corev1.PodSpec{DNSPolicy: policy, Containers: []corev1.Container{{Name: "c", Image: "i"}}}
}

func templ(policy corev1.DNSPolicy, annotations map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}, Spec: podSpec(policy)}
}

const (
	paramsKey = "pod.dnsplane.io/dns-params"
	policyKey = "pod.dnsplane.io/dns-policy"
)

func TestPodMatchCondition(t *testing.T) {
	t.Parallel()
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	pod := func(policy corev1.DNSPolicy, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: ann}, Spec: podSpec(policy)}
	}
	for _, tc := range []struct {
		name string
		obj  *corev1.Pod
		want bool
	}{
		{"Custom", pod("Custom", map[string]string{paramsKey: `{}`}), true},
		{"Custom without annotation", pod("Custom", nil), true},
		{"ClusterFirstWithAutopath", pod("ClusterFirstWithAutopath", nil), true},
		{"rewritten from a template", pod(corev1.DNSNone, map[string]string{policyKey: "Custom", paramsKey: `{}`}), true},
		{"stray params annotation", pod(corev1.DNSClusterFirst, map[string]string{paramsKey: `{}`}), true},
		{"ordinary ClusterFirst", pod(corev1.DNSClusterFirst, nil), false},
		{"ordinary with other annotations", pod(corev1.DNSClusterFirst, map[string]string{"a": "b"}), false},
		{"ordinary Default", pod(corev1.DNSDefault, nil), false},
		{"ordinary ClusterFirstWithHostNet", pod(corev1.DNSClusterFirstWithHostNet, nil), false},
		{"ordinary None", pod(corev1.DNSNone, map[string]string{"a": "b"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := matches(t, PodMatchCondition, tc.obj, gvr, gvk); got != tc.want {
				t.Errorf("matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWorkloadMatchCondition(t *testing.T) {
	t.Parallel()
	type kind struct {
		gvk  schema.GroupVersionKind
		gvr  schema.GroupVersionResource
		make func(corev1.PodTemplateSpec) runtime.Object
	}
	om := metav1.ObjectMeta{Name: "w", Namespace: "ns"}
	kinds := []kind{
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), appsv1.SchemeGroupVersion.WithResource("deployments"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &appsv1.Deployment{ObjectMeta: om, Spec: appsv1.DeploymentSpec{Template: t}}
			}},
		{appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), appsv1.SchemeGroupVersion.WithResource("replicasets"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &appsv1.ReplicaSet{ObjectMeta: om, Spec: appsv1.ReplicaSetSpec{Template: t}}
			}},
		{appsv1.SchemeGroupVersion.WithKind("StatefulSet"), appsv1.SchemeGroupVersion.WithResource("statefulsets"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &appsv1.StatefulSet{ObjectMeta: om, Spec: appsv1.StatefulSetSpec{Template: t}}
			}},
		{appsv1.SchemeGroupVersion.WithKind("DaemonSet"), appsv1.SchemeGroupVersion.WithResource("daemonsets"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &appsv1.DaemonSet{ObjectMeta: om, Spec: appsv1.DaemonSetSpec{Template: t}}
			}},
		{batchv1.SchemeGroupVersion.WithKind("Job"), batchv1.SchemeGroupVersion.WithResource("jobs"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &batchv1.Job{ObjectMeta: om, Spec: batchv1.JobSpec{Template: t}}
			}},
		{batchv1.SchemeGroupVersion.WithKind("CronJob"), batchv1.SchemeGroupVersion.WithResource("cronjobs"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &batchv1.CronJob{ObjectMeta: om, Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: t}}}}
			}},
		{corev1.SchemeGroupVersion.WithKind("ReplicationController"), corev1.SchemeGroupVersion.WithResource("replicationcontrollers"),
			func(t corev1.PodTemplateSpec) runtime.Object {
				return &corev1.ReplicationController{ObjectMeta: om, Spec: corev1.ReplicationControllerSpec{Template: &t}}
			}},
		{corev1.SchemeGroupVersion.WithKind("PodTemplate"), corev1.SchemeGroupVersion.WithResource("podtemplates"),
			func(t corev1.PodTemplateSpec) runtime.Object { return &corev1.PodTemplate{ObjectMeta: om, Template: t} }},
	}
	cases := []struct {
		name string
		tmpl corev1.PodTemplateSpec
		want bool
	}{
		{"Custom", templ("Custom", map[string]string{paramsKey: `{}`}), true},
		{"ClusterFirstWithAutopath", templ("ClusterFirstWithAutopath", nil), true},
		{"rewritten", templ(corev1.DNSNone, map[string]string{policyKey: "ClusterFirstWithAutopath"}), true},
		{"params annotation only", templ(corev1.DNSClusterFirst, map[string]string{paramsKey: `{}`}), true},
		{"ordinary", templ(corev1.DNSClusterFirst, map[string]string{"app": "x"}), false},
		{"ordinary without metadata", templ(corev1.DNSClusterFirst, nil), false},
		{"ordinary undefaulted policy", templ("", nil), false},
	}
	for _, k := range kinds {
		for _, tc := range cases {
			t.Run(k.gvk.Kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				if got := matches(t, WorkloadMatchCondition, k.make(tc.tmpl), k.gvr, k.gvk); got != tc.want {
					t.Errorf("matches = %v, want %v", got, tc.want)
				}
			})
		}
	}
	t.Run("ReplicationController without template", func(t *testing.T) {
		t.Parallel()
		rc := &corev1.ReplicationController{ObjectMeta: om}
		if matches(t, WorkloadMatchCondition, rc, corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), corev1.SchemeGroupVersion.WithKind("ReplicationController")) {
			t.Error("matches = true, want false")
		}
	})
}
