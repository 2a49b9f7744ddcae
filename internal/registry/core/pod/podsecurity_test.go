package pod

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/utils/ptr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/validation"
)

type namespaces map[string]*corev1.Namespace

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// TestPodSecurity: ValidateAdmission refuses and warns as kube-apiserver's PodSecurity
// plugin does, by the namespace's pod-security.kubernetes.io labels, and
// admits everything in a namespace without them (kube's default
// AdmissionConfiguration is privileged:latest).
func TestPodSecurity(t *testing.T) {
	t.Parallel()
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	s := New(validation.Options{}).WithPodSecurity(namespaces{
		"open":       ns("open", nil),
		"baseline":   ns("baseline", map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}),
		"pinned":     ns("pinned", map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.30"}),
		"restricted": ns("restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}),
		"warn":       ns("warn", map[string]string{"pod-security.kubernetes.io/warn": "baseline"}),
		"audit":      ns("audit", map[string]string{"pod-security.kubernetes.io/audit": "baseline"}),
		"bad":        ns("bad", map[string]string{"pod-security.kubernetes.io/enforce": "nonsense"}),
	})
	privileged := func(p *dpcorev1.Pod) {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	}
	tests := []struct {
		name, namespace string
		change          func(*dpcorev1.Pod)
		old             func(*dpcorev1.Pod) // update from the pod with this change
		wantErr         string
		wantWarnings    []string
	}{
		{name: "no label: privileged admitted", namespace: "open", change: privileged},
		{name: "baseline: plain pod admitted", namespace: "baseline"},
		{name: "baseline: privileged refused", namespace: "baseline", change: privileged,
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "baseline pinned to v1.30: privileged refused", namespace: "pinned", change: privileged,
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:v1.30": privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "baseline: hostNetwork refused", namespace: "baseline", change: func(p *dpcorev1.Pod) { p.Spec.HostNetwork = true },
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`},
		{name: "baseline: hostPath refused", namespace: "baseline", change: func(p *dpcorev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes (volume "root")`},
		{name: "restricted: runAsNonRoot unset refused", namespace: "restricted",
			wantErr: `pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
		{name: "restricted: runAsUser 0 refused", namespace: "restricted", change: func(p *dpcorev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		}, wantErr: `pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsUser=0 (pod must not set runAsUser=0)`},
		{name: "restricted: compliant pod admitted", namespace: "restricted", change: func(p *dpcorev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		}},
		{name: "warn: privileged admitted with a warning", namespace: "warn", change: privileged,
			wantWarnings: []string{`would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`}},
		{name: "audit only: privileged admitted silently", namespace: "audit", change: privileged},
		{name: "invalid label: evaluated as restricted", namespace: "bad",
			wantErr: `pods "x" is forbidden: violates PodSecurity "restricted:latest": `},
		{name: "update that changes nothing significant: admitted", namespace: "baseline", change: func(p *dpcorev1.Pod) {
			privileged(p)
			p.Labels = map[string]string{"a": "b"}
		}, old: privileged},
		{name: "update to an image: evaluated", namespace: "baseline", change: func(p *dpcorev1.Pod) {
			privileged(p)
			p.Spec.Containers[0].Image = "other"
		}, old: privileged,
			wantErr: `pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`},
	}
	mkPod := func(namespace string, change func(*dpcorev1.Pod)) *dpcorev1.Pod {
		p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: namespace}}
		p.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
		if change != nil {
			change(p)
		}
		return p
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var old any
			if tt.old != nil {
				old = mkPod(tt.namespace, tt.old)
			}
			var got warnings
			ctx := warning.WithWarningRecorder(t.Context(), &got)
			err := s.ValidateAdmission(ctx, mkPod(tt.namespace, tt.change), old)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Admit: %v, want admitted", err)
			case tt.wantErr != "":
				if !apierrors.IsForbidden(err) {
					t.Fatalf("Admit: %v, want 403 Forbidden", err)
				}
				if msg := err.Error(); len(msg) < len(tt.wantErr) || msg[:len(tt.wantErr)] != tt.wantErr {
					t.Fatalf("Admit: %q, want it to start with %q", msg, tt.wantErr)
				}
			}
			if diff := cmp.Diff(tt.wantWarnings, []string(got)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodSecurityNamespaceError: a namespace that cannot be read refuses
// the pod with kube's 500, as upstream's plugin fails closed.
func TestPodSecurityNamespaceError(t *testing.T) {
	t.Parallel()
	s := New(validation.Options{}).WithPodSecurity(namespaces{})
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "gone"}}
	err := s.ValidateAdmission(t.Context(), p, nil)
	if want := fmt.Sprintf("Internal error occurred: failed to lookup namespace %q", "gone"); err == nil || err.Error() != want {
		t.Fatalf("Admit: %v, want %q", err, want)
	}
}
