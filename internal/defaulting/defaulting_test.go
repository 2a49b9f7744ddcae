package defaulting

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestDNSPolicy(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		get  func(any) corev1.DNSPolicy
		want corev1.DNSPolicy
	}{
		{"empty pod policy", &dpcorev1.Pod{}, func(o any) corev1.DNSPolicy { return o.(*dpcorev1.Pod).Spec.DNSPolicy }, corev1.DNSClusterFirst},
		{"kept", &dpcorev1.Pod{Spec: dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSCustom}}},
			func(o any) corev1.DNSPolicy { return o.(*dpcorev1.Pod).Spec.DNSPolicy }, dpcorev1.DNSCustom},
		{"cronjob template", &dpbatchv1.CronJob{},
			func(o any) corev1.DNSPolicy {
				return o.(*dpbatchv1.CronJob).Spec.JobTemplate.Spec.Template.Spec.DNSPolicy
			}, corev1.DNSClusterFirst},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			DNSPolicy(tt.obj)
			if got := tt.get(tt.obj); got != tt.want {
				t.Errorf("dnsPolicy = %q, want %q", got, tt.want)
			}
		})
	}
	DNSPolicy(&corev1.ConfigMap{}) // kinds without a pod spec are left alone
	DNSPolicy(nil)
}
