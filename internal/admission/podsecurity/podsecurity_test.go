package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/utils/ptr"
)

type namespaces map[string]*corev1.Namespace

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// pods is a PodLister over fixed pods, or failing with err.
type pods struct {
	pods []*corev1.Pod
	err  error
}

func (p pods) ListPods(_ context.Context, namespace string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, pod := range p.pods {
		if pod.Namespace == namespace {
			out = append(out, pod)
		}
	}
	return out, p.err
}

type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// testNamespaces are namespaces under each kind of pod-security label.
var testNamespaces = namespaces{
	"open":       namespace("open", nil),
	"baseline":   namespace("baseline", map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}),
	"pinned":     namespace("pinned", map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.30"}),
	"restricted": namespace("restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}),
	"warn":       namespace("warn", map[string]string{"pod-security.kubernetes.io/warn": "baseline"}),
	"both":       namespace("both", map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}),
	"audit":      namespace("audit", map[string]string{"pod-security.kubernetes.io/audit": "baseline"}),
	"bad":        namespace("bad", map[string]string{"pod-security.kubernetes.io/enforce": "nonsense"}),
}

func newAdmission(t *testing.T, ns NamespaceGetter, p PodLister) *Admission {
	t.Helper()
	a, err := New(ns, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// validate runs a.Validate and returns the warnings it sent and its error.
func validate(t *testing.T, a *Admission, obj, old runtime.Object) ([]string, error) {
	t.Helper()
	var got warnings
	ctx := warning.WithWarningRecorder(t.Context(), &got)
	err := a.Validate(ctx, obj, old)
	return got, err
}

func privileged(s *corev1.PodSpec) {
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

func restrictedSpec(s *corev1.PodSpec) {
	s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	s.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

func spec(change func(*corev1.PodSpec)) corev1.PodSpec {
	s := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
	if change != nil {
		change(&s)
	}
	return s
}

func testPod(name, namespace string, change func(*corev1.PodSpec)) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec(change)}
}

// TestValidatePod: pods are refused and warned about as kube-apiserver's
// PodSecurity plugin does, by the namespace's pod-security.kubernetes.io
// labels, and everything is admitted in a namespace without them (kube's
// default AdmissionConfiguration is privileged:latest).
func TestValidatePod(t *testing.T) {
	t.Parallel()
	a := newAdmission(t, testNamespaces, nil)
	tests := []struct {
		name, namespace string
		change          func(*corev1.PodSpec)
		old             func(*corev1.PodSpec) // update from the pod with this change
		oldLabels       bool                  // the update also changes labels only
		wantErr         string
		wantWarnings    []string
	}{
		{name: "no label: privileged admitted", namespace: "open", change: privileged},
		{name: "baseline: plain pod admitted", namespace: "baseline"},
		{name: "baseline: privileged refused", namespace: "baseline", change: privileged,
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "baseline pinned to v1.30: privileged refused", namespace: "pinned", change: privileged,
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:v1.30": privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "baseline: hostNetwork refused", namespace: "baseline", change: func(s *corev1.PodSpec) { s.HostNetwork = true },
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`},
		{name: "baseline: hostPath refused", namespace: "baseline", change: func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes (volume "root")`},
		{name: "restricted: runAsNonRoot unset refused", namespace: "restricted",
			wantErr: `pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
		{name: "restricted: runAsUser 0 refused", namespace: "restricted", change: func(s *corev1.PodSpec) {
			restrictedSpec(s)
			s.SecurityContext.RunAsUser = ptr.To[int64](0)
		}, wantErr: `pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsUser=0 (pod must not set runAsUser=0)`},
		{name: "restricted: compliant pod admitted", namespace: "restricted", change: restrictedSpec},
		{name: "warn: privileged admitted with a warning", namespace: "warn", change: privileged,
			wantWarnings: []string{`would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`}},
		{name: "enforce baseline, warn restricted: baseline pod admitted with a warning", namespace: "both",
			wantWarnings: []string{`would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`}},
		{name: "audit only: privileged admitted silently", namespace: "audit", change: privileged},
		{name: "invalid label: evaluated as restricted", namespace: "bad",
			wantErr: `pods "x" is forbidden: violates PodSecurity "restricted:latest": `},
		{name: "update that changes nothing significant: admitted", namespace: "baseline", change: privileged, old: privileged, oldLabels: true},
		{name: "update to an image: evaluated", namespace: "baseline", change: func(s *corev1.PodSpec) {
			privileged(s)
			s.Containers[0].Image = "other"
		}, old: privileged,
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "namespace cannot be read: refused with kube's 500", namespace: "gone",
			wantErr: `Internal error occurred: failed to lookup namespace "gone"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := testPod("x", tt.namespace, tt.change)
			var old runtime.Object
			if tt.old != nil {
				o := testPod("x", tt.namespace, tt.old)
				if tt.oldLabels {
					p.Labels = map[string]string{"a": "b"}
				}
				old = o
			}
			got, err := validate(t, a, p, old)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v, want admitted", err)
			case tt.wantErr != "" && !strings.HasPrefix(fmt.Sprint(err), tt.wantErr):
				t.Fatalf("Validate: %v, want an error starting with %q", err, tt.wantErr)
			case tt.wantErr != "" && !apierrors.IsForbidden(err) && !apierrors.IsInternalError(err):
				t.Fatalf("Validate: %v, want 403 or 500", err)
			}
			if diff := cmp.Diff(tt.wantWarnings, []string(got)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// carriers are one object of each pod template carrier kube's plugin
// judges, with the pod spec s in namespace ns.
func carriers(ns string, s corev1.PodSpec) []runtime.Object {
	meta := metav1.ObjectMeta{Name: "w", Namespace: ns}
	tmpl := corev1.PodTemplateSpec{Spec: s}
	return []runtime.Object{
		&corev1.PodTemplate{ObjectMeta: meta, Template: tmpl},
		&corev1.ReplicationController{ObjectMeta: meta, Spec: corev1.ReplicationControllerSpec{Template: &tmpl}},
		&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Template: tmpl}},
		&appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Template: tmpl}},
		&appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Template: tmpl}},
		&appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Template: tmpl}},
		&batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: tmpl}},
		&batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}},
	}
}

// TestValidateTemplates: a pod template carrier is never refused, as by
// kube's plugin (ValidatePodController): its template is held to the
// namespace's warn level, which is the enforce level when only enforce is
// labelled, and a violation is a Warning header, on create and on every
// update.
func TestValidateTemplates(t *testing.T) {
	t.Parallel()
	a := newAdmission(t, testNamespaces, nil)
	hostNetwork := func(s *corev1.PodSpec) { s.HostNetwork = true }
	const restrictedViolations = `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	tests := []struct {
		name, namespace string
		change          func(*corev1.PodSpec)
		update          bool
		wantWarnings    []string
	}{
		{name: "no label: hostNetwork silent", namespace: "open", change: hostNetwork},
		{name: "enforce baseline: plain template silent", namespace: "baseline"},
		{name: "enforce baseline: hostNetwork warned about at the enforce level", namespace: "baseline", change: hostNetwork,
			wantWarnings: []string{`would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}},
		{name: "enforce baseline: update warned about too", namespace: "baseline", change: hostNetwork, update: true,
			wantWarnings: []string{`would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}},
		{name: "enforce baseline v1.30: warned about at v1.30", namespace: "pinned", change: privileged,
			wantWarnings: []string{`would violate PodSecurity "baseline:v1.30": privileged (container "c" must not set securityContext.privileged=true)`}},
		{name: "enforce restricted: plain template warned about", namespace: "restricted",
			wantWarnings: []string{`would violate PodSecurity "restricted:latest": ` + restrictedViolations}},
		{name: "enforce restricted: compliant template silent", namespace: "restricted", change: restrictedSpec},
		{name: "warn baseline: hostNetwork warned about", namespace: "warn", change: hostNetwork,
			wantWarnings: []string{`would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}},
		{name: "enforce baseline, warn restricted: warned about at the warn level", namespace: "both",
			wantWarnings: []string{`would violate PodSecurity "restricted:latest": ` + restrictedViolations}},
		{name: "audit only: silent", namespace: "audit", change: hostNetwork},
		{name: "namespace cannot be read: admitted silently", namespace: "gone", change: hostNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			olds := carriers(tt.namespace, spec(nil))
			for i, obj := range carriers(tt.namespace, spec(tt.change)) {
				var old runtime.Object
				if tt.update {
					old = olds[i]
				}
				got, err := validate(t, a, obj, old)
				if err != nil {
					t.Errorf("%T: %v, want admitted", obj, err)
				}
				if diff := cmp.Diff(tt.wantWarnings, []string(got)); diff != "" {
					t.Errorf("%T: warnings (-want +got):\n%s", obj, diff)
				}
			}
		})
	}
}

// TestValidateNamespace: kube's plugin on namespaces refuses labels that do
// not parse, and a stricter enforce level is admitted with warnings naming
// the pods already there that violate it.
func TestValidateNamespace(t *testing.T) {
	t.Parallel()
	const enforce, version = "pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/enforce-version"
	existing := pods{pods: []*corev1.Pod{
		testPod("web", "team", nil),
		testPod("host-b", "team", func(s *corev1.PodSpec) { s.HostNetwork = true }),
		testPod("host-a", "team", func(s *corev1.PodSpec) { s.HostNetwork = true }),
		testPod("other", "elsewhere", func(s *corev1.PodSpec) { s.HostNetwork = true }),
	}}
	const restrictedReason = "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
	tests := []struct {
		name         string
		old, labels  map[string]string // old nil: create
		lister       PodLister
		wantErr      string
		wantWarnings []string
	}{
		{name: "create without labels", labels: nil},
		{name: "create with enforce restricted: no pods checked", labels: map[string]string{enforce: "restricted"}},
		{name: "create with an invalid level refused", labels: map[string]string{enforce: "nonsense"},
			wantErr: `Namespace "team" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "nonsense": must be one of privileged, baseline, restricted`},
		{name: "update to an invalid version refused", old: map[string]string{}, labels: map[string]string{enforce: "baseline", version: "v1.x"},
			wantErr: `Namespace "team" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v1.x": must be "latest" or "v1.x"`},
		{name: "update keeping an invalid label admitted", old: map[string]string{enforce: "nonsense"}, labels: map[string]string{enforce: "nonsense", "a": "b"}},
		{name: "enforce baseline set: hostNetwork pods named", old: map[string]string{}, labels: map[string]string{enforce: "baseline"},
			wantWarnings: []string{
				`existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"`,
				`host-a (and 1 other pod): host namespaces`,
			}},
		{name: "enforce raised to restricted: every pod named", old: map[string]string{enforce: "baseline"}, labels: map[string]string{enforce: "restricted"},
			wantWarnings: []string{
				`existing pods in namespace "team" violate the new PodSecurity enforce level "restricted:latest"`,
				`host-a (and 1 other pod): host namespaces, ` + restrictedReason,
				`web: ` + restrictedReason,
			}},
		{name: "enforce relaxed: nothing checked", old: map[string]string{enforce: "restricted"}, labels: map[string]string{enforce: "baseline"}},
		{name: "enforce unchanged: nothing checked", old: map[string]string{enforce: "restricted"}, labels: map[string]string{enforce: "restricted", "a": "b"}},
		{name: "enforce set to privileged: nothing checked", old: map[string]string{}, labels: map[string]string{enforce: "privileged"}},
		{name: "pods cannot be listed: kube's warning", old: map[string]string{}, labels: map[string]string{enforce: "baseline"},
			lister:       pods{err: errors.New("etcd down")},
			wantWarnings: []string{"failed to list pods while checking new PodSecurity enforce level"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lister := tt.lister
			if lister == nil {
				lister = existing
			}
			a := newAdmission(t, namespaces{}, lister)
			var old runtime.Object
			if tt.old != nil {
				old = namespace("team", tt.old)
			}
			got, err := validate(t, a, namespace("team", tt.labels), old)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v, want admitted", err)
			case tt.wantErr != "" && (!apierrors.IsInvalid(err) || err.Error() != tt.wantErr):
				t.Fatalf("Validate: %v, want 422 %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantWarnings, []string(got)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateOtherKinds: an object the library does not judge is a
// programming error, answered with a 500 rather than admitted.
func TestValidateOtherKinds(t *testing.T) {
	t.Parallel()
	a := newAdmission(t, testNamespaces, nil)
	if _, err := validate(t, a, &corev1.ConfigMap{}, nil); !apierrors.IsInternalError(err) {
		t.Fatalf("Validate(ConfigMap): %v, want a 500", err)
	}
}

func TestNewNeedsNamespaces(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, nil); err == nil {
		t.Fatal("New(nil, nil): no error")
	}
}
