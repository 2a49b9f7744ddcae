package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

// customPod is a pod asking for dnsPolicy Custom with params (JSON) in
// the annotation, as users write it on a stock cluster.
func customPod(name, params string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{dnsparams.Annotation: params}},
		Spec: corev1.PodSpec{
			DNSPolicy:  "Custom",
			Containers: []corev1.Container{{Name: "c", Image: "example"}},
		},
	}
}
