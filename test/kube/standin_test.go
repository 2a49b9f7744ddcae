package kube

import (
	"bytes"
	"fmt"
	"os/exec"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/webhook"
)

// The install's names (the contract of issue 30).
const (
	installNamespace = "dnsplane-system"
	webhookService   = "dnsplane-webhook"
	webhookConfig    = "dnsplane"
	dnsImage         = "ghcr.io/dnsplane/dnsplane-dns:v0.1.0"
	fullImage        = "ghcr.io/dnsplane/dnsplane:v0.1.0"
)

// standinManifests is what the test installs while the module has no
// rendered chart (deploy/manifests/dnsplane.yaml): the CRD `dnsplane
// operator --print-crd` prints and the contract's objects, the webhook
// configurations with internal/webhook's match conditions. Its RBAC is
// cluster-admin for the operator and the webhook: the chart's own RBAC is
// proved only when the rendered chart is installed.
func standinManifests() ([]byte, error) {
	crd, err := exec.Command(dnsplaneBin, "operator", "--print-crd").Output()
	if err != nil {
		return nil, fmt.Errorf("dnsplane operator --print-crd: %w", err)
	}
	labels := func(app string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": "dnsplane"}
	}
	deployment := func(name, sa string, args []string) *appsv1.Deployment {
		return &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: installNamespace, Labels: labels(name)},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels(name)},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels(name)},
					Spec: corev1.PodSpec{
						ServiceAccountName: sa,
						Containers: []corev1.Container{{
							Name: name, Image: fullImage, Args: args,
							Env: []corev1.EnvVar{{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
								FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
							Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 9443}},
						}},
					},
				},
			},
		}
	}
	adminBinding := func(sa string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "dnsplane-standin-" + sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: installNamespace, Name: sa}},
		}
	}
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	ref := func(path string) admissionregistrationv1.WebhookClientConfig {
		port := int32(443)
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: installNamespace, Name: webhookService, Path: &path, Port: &port}}
	}
	podRule := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	workloadRules := []admissionregistrationv1.RuleWithOperations{
		{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
				Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets"}}},
		{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"},
				Resources: []string{"jobs", "cronjobs"}}},
		{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
				Resources: []string{"replicationcontrollers", "podtemplates"}}},
	}
	cond := func(expr string) []admissionregistrationv1.MatchCondition {
		return []admissionregistrationv1.MatchCondition{{Name: webhook.MatchConditionName, Expression: expr}}
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: webhookConfig},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: webhook.PodWebhookName, ClientConfig: ref("/mutate"), Rules: podRule, FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &timeout,
				MatchConditions: cond(webhook.PodMatchCondition)},
			{Name: webhook.WorkloadWebhookName, ClientConfig: ref("/mutate"), Rules: workloadRules, FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &timeout,
				MatchConditions: cond(webhook.WorkloadMatchCondition)},
		},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: webhookConfig},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: webhook.PodWebhookName, ClientConfig: ref("/validate"), Rules: podRule, FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &timeout,
				MatchConditions: cond(webhook.PodMatchCondition)},
			{Name: webhook.WorkloadWebhookName, ClientConfig: ref("/validate"), Rules: workloadRules, FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &timeout,
				MatchConditions: cond(webhook.WorkloadMatchCondition)},
			{Name: webhook.DNSWebhookName, ClientConfig: ref("/validate"), FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &timeout,
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"operator.dnsplane.io"}, APIVersions: []string{"v1"},
						Resources: []string{"dnses"}}}}},
		},
	}
	objs := []runtime.Object{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: installNamespace}},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: "dnsplane-operator", Namespace: installNamespace}},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: "dnsplane-webhook", Namespace: installNamespace}},
		adminBinding("dnsplane-operator"), adminBinding("dnsplane-webhook"),
		// The cluster DNS pods run as the namespace's default account and
		// read what CoreDNS's kubernetes plugin reads (kubeadm's
		// system:coredns role).
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "dnsplane-standin-dns"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "dnsplane-standin-dns"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "dnsplane-standin-dns"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: installNamespace, Name: "default"}},
		},
		deployment("dnsplane-operator", "dnsplane-operator", []string{"operator"}),
		deployment("dnsplane-webhook", "dnsplane-webhook", []string{"webhook"}),
		&corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: webhookService, Namespace: installNamespace},
			Spec: corev1.ServiceSpec{Selector: labels("dnsplane-webhook"),
				Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(9443)}}},
		},
		mutating, validating,
	}
	var b bytes.Buffer
	b.Write(crd)
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}
