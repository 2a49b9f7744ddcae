package defaulting

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/dnsplane/dnsplane/api"
)

// PodSpecs applies the pod spec defaults users and controllers rely on
// reading back (dnsPolicy, restartPolicy, schedulerName, grace period,
// container pull policy and ports) to every pod spec obj carries. Fields
// upstream defaults but nobody in dnsplane reads are left alone.
func PodSpecs(obj any) {
	DNSPolicy(obj)
	for _, at := range api.PodSpecs(obj) {
		podSpec(&at.Spec.PodSpec)
	}
}

func podSpec(s *corev1.PodSpec) {
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	for i := range s.Containers {
		container(&s.Containers[i])
	}
	for i := range s.InitContainers {
		container(&s.InitContainers[i])
	}
}

func container(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
}

// pullPolicy is upstream's: Always for :latest or untagged images.
func pullPolicy(image string) corev1.PullPolicy {
	name := image
	if at := lastIndex(name, '@'); at >= 0 {
		return corev1.PullIfNotPresent
	}
	slash := lastIndex(name, '/')
	colon := lastIndex(name, ':')
	if colon <= slash || name[colon+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func lastIndex(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Service applies upstream's Service spec defaults: type, session
// affinity, internal traffic policy, port protocol and target port.
func Service(s *corev1.ServiceSpec) {
	if s.Type == "" {
		s.Type = corev1.ServiceTypeClusterIP
	}
	if s.SessionAffinity == "" {
		s.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.Type != corev1.ServiceTypeExternalName && s.InternalTrafficPolicy == nil {
		s.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster)
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

// Deployment applies upstream's apps/v1 Deployment spec defaults.
func Deployment(s *appsv1.DeploymentSpec) {
	if s.Replicas == nil {
		s.Replicas = ptr(int32(1))
	}
	if s.Strategy.Type == "" {
		s.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType && s.Strategy.RollingUpdate == nil {
		q := intstr.FromString("25%")
		s.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &q, MaxSurge: &q}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = ptr(int32(10))
	}
	if s.ProgressDeadlineSeconds == nil {
		s.ProgressDeadlineSeconds = ptr(int32(600))
	}
}

func ptr[T any](v T) *T { return &v }
