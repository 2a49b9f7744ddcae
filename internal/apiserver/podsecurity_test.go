package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestPodSecurityAdmission: over HTTP, a namespace's
// pod-security.kubernetes.io/enforce label refuses a hostNetwork pod with
// kube-apiserver's 403 and message, and its warn label admits it with
// kube's Warning header (what kubectl prints as "Warning: ..."). A
// privileged pod is refused before admission, by validation, as
// kube-apiserver with its default --allow-privileged=false refuses it.
func TestPodSecurityAdmission(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	labelled := func(label string) string {
		name := newNamespace(t, ts.client)
		nsc := ts.client.CoreV1().Namespaces()
		ns, err := nsc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[label] = "baseline"
		if _, err := nsc.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return name
	}
	host := pod("host")
	host.Spec.HostNetwork = true
	privileged := pod("priv")
	privileged.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	create := func(ns string, p *corev1.Pod) ([]string, error) {
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		res := ts.client.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/"+ns+"/pods").
			SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
		var texts []string
		for _, w := range res.Warnings() {
			texts = append(texts, w.Text)
		}
		return texts, res.Error()
	}

	enforce := labelled("pod-security.kubernetes.io/enforce")
	_, err := create(enforce, host)
	const want = `pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("hostNetwork pod in an enforce=baseline namespace: %v, want 403 %q", err, want)
	}
	const invalid = `Pod "priv" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`
	if _, err := create(enforce, privileged); !apierrors.IsInvalid(err) || err.Error() != invalid {
		t.Errorf("privileged pod in an enforce=baseline namespace: %v, want 422 %q", err, invalid)
	}
	if _, err := create(enforce, pod("plain")); err != nil {
		t.Errorf("plain pod in an enforce=baseline namespace: %v", err)
	}

	warn := labelled("pod-security.kubernetes.io/warn")
	warnings, err := create(warn, host)
	if err != nil {
		t.Fatalf("hostNetwork pod in a warn=baseline namespace: %v", err)
	}
	wantWarnings := []string{`would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}
	if !slices.Equal(warnings, wantWarnings) {
		t.Errorf("warnings %q, want %q", warnings, wantWarnings)
	}
}

// TestPodSecurityTemplatesAndNamespaceLabels: over HTTP, as on
// kube-apiserver, a Deployment whose template violates its namespace's
// enforce level is created with kube's Warning header, and a label change
// that makes a namespace's enforce level stricter is admitted with
// warnings naming the pods already there that violate it (what `kubectl
// label ns` prints as "Warning: ...").
func TestPodSecurityTemplatesAndNamespaceLabels(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	warningsOf := func(res rest.Result) []string {
		var texts []string
		for _, w := range res.Warnings() {
			texts = append(texts, w.Text)
		}
		return texts
	}
	labelEnforce := func(ns, level string) ([]string, error) {
		body := fmt.Sprintf(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":%q}}}`, level)
		res := ts.client.CoreV1().RESTClient().Patch(types.MergePatchType).AbsPath("/api/v1/namespaces/" + ns).Body([]byte(body)).Do(ctx)
		return warningsOf(res), res.Error()
	}

	ns := newNamespace(t, ts.client)
	if _, err := labelEnforce(ns, "baseline"); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "host"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "host"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "host"}},
				Spec:       corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	body, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	res := ts.client.AppsV1().RESTClient().Post().AbsPath("/apis/apps/v1/namespaces/"+ns+"/deployments").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
	if err := res.Error(); err != nil {
		t.Fatalf("hostNetwork Deployment in an enforce=baseline namespace: %v, want created", err)
	}
	want := []string{`would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}
	if got := warningsOf(res); !slices.Equal(got, want) {
		t.Errorf("Deployment create: warnings %q, want %q", got, want)
	}

	// A pod that baseline admits and restricted would not.
	if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, pod("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := labelEnforce(ns, "restricted")
	if err != nil {
		t.Fatalf("labelling enforce=restricted: %v", err)
	}
	want = []string{
		fmt.Sprintf(`existing pods in namespace %q violate the new PodSecurity enforce level "restricted:latest"`, ns),
		`web: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("labelling enforce=restricted: warnings %q, want %q", got, want)
	}
	if _, err := labelEnforce(ns, "nonsense"); !apierrors.IsInvalid(err) {
		t.Errorf("labelling enforce=nonsense: %v, want 422", err)
	}
}
