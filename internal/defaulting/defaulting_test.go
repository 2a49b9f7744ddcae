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

func TestDefaults(t *testing.T) {
	pod := &dpcorev1.Pod{Spec: dpcorev1.PodSpec{PodSpec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Image: "nginx"}, {Name: "b", Image: "nginx:1.27"}, {Name: "c", Image: "reg:5000/x"}, {Name: "d", Image: "x@sha256:ab"},
	}}}}
	PodSpecs(pod)
	s := pod.Spec
	if s.DNSPolicy != corev1.DNSClusterFirst || s.RestartPolicy != corev1.RestartPolicyAlways || s.SchedulerName != "default-scheduler" || *s.TerminationGracePeriodSeconds != 30 {
		t.Errorf("pod spec defaults: %+v", s.PodSpec)
	}
	for i, want := range []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullAlways, corev1.PullIfNotPresent} {
		if got := s.Containers[i].ImagePullPolicy; got != want {
			t.Errorf("container %s: imagePullPolicy %s, want %s", s.Containers[i].Image, got, want)
		}
	}

	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	Service(&svc.Spec)
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Errorf("service defaults: %+v", svc.Spec)
	}
}
