package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkAdmission measures a pod create's admission on the real
// kube-apiserver with dnsplane installed: a Custom pod, which the match
// conditions send to the webhook (/mutate, then /validate), against the
// same pod in the webhook's output form (dnsPolicy None with its
// dnsConfig), which they send nowhere. The creates are dry runs: the whole
// admission chain runs, the webhooks included (sideEffects None), and
// nothing is stored or scheduled, so only admission differs.
//
//	go test ./test/kube -run '^$' -bench Admission -benchtime 200x
func BenchmarkAdmission(b *testing.B) {
	requireTools(b)
	c := startCluster(b, 1)
	ctx := context.Background()
	c.install(ctx, b)
	ref, err := c.cs.CoreV1().Pods("default").Create(ctx, customPod("ref", customParams), metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	pods := map[string]func(i int) *corev1.Pod{
		"Webhook": func(i int) *corev1.Pod { return customPod(fmt.Sprintf("with-%d", i), customParams) },
		"NoWebhook": func(i int) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("without-%d", i)},
				Spec: corev1.PodSpec{DNSPolicy: corev1.DNSNone, DNSConfig: ref.Spec.DNSConfig,
					Containers: []corev1.Container{{Name: "c", Image: "example"}}}}
		},
	}
	for _, name := range []string{"NoWebhook", "Webhook"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := c.cs.CoreV1().Pods("default").Create(ctx, pods[name](i), dry); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
