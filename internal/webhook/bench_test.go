package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/webhook/poddns"
)

// benchPod is a typical pod as kube-apiserver sends it: defaulted, one
// container, a few labels and annotations.
func benchPod(policy corev1.DNSPolicy, annotations map[string]string) []byte {
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-7d9f8b6c5d-", Namespace: "shop", Labels: map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d"}, Annotations: annotations},
		Spec: corev1.PodSpec{
			DNSPolicy: policy, RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
			Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1.2.3",
				Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}}, TerminationMessagePath: "/dev/termination-log",
				ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	b, _ := json.Marshal(pod)
	return b
}

// BenchmarkMutatePod is the webhook's own cost per pod admission: one
// AdmissionReview through the /mutate handler (decode, validate, rewrite,
// JSONPatch, encode), without the TLS and network of a real call.
func BenchmarkMutatePod(b *testing.B) {
	rev := poddns.NewReviewer(poddns.Cluster{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
		NodeCache: []string{"169.254.20.10"}}, nil)
	routes := Routes{Mutate: map[schema.GroupVersionResource]Reviewer{}, Validate: map[schema.GroupVersionResource]Reviewer{}}
	for gvr := range poddns.Kinds() {
		routes.Mutate[gvr], routes.Validate[gvr] = rev.Mutate, rev.Validate
	}
	h := Handler(routes, nil, nil)
	for _, bc := range []struct {
		name     string
		endpoint string
		raw      []byte
	}{
		{"custom", "/mutate", benchPod("Custom", map[string]string{poddns.ParamsAnnotation: `{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","$(HOST)"],"options":["ndots:2"]}}`})},
		{"autopath", "/mutate", benchPod("ClusterFirstWithAutopath", nil)},
		{"validate-custom", "/validate", benchPod("Custom", map[string]string{poddns.ParamsAnnotation: `{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","$(HOST)"],"options":["ndots:2"]}}`})},
	} {
		body, _ := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "u", Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
				Namespace: "shop", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: bc.raw}},
		})
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, bc.endpoint, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
