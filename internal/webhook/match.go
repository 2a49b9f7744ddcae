package webhook

// The matchConditions of the pods.dns.dnsplane.io and
// workloads.dns.dnsplane.io webhooks, in the mutating and the validating
// configuration alike. They are the authoritative strings: the Helm chart
// copies them, and a test there checks the rendered manifests carry exactly
// these. Only objects that use dnsplane's policies (or carry the marks of
// one: the parameters annotation, the webhook's policy annotation) reach
// the webhook, so with failurePolicy Fail a webhook that is down refuses
// those and nothing else (docs/kubernetes.md, "Failure modes").
const (
	// MatchConditionName names the one condition of each webhook.
	MatchConditionName = "uses-dnsplane-pod-dns"

	// PodMatchCondition selects Pods. dnsPolicy is always set: the API
	// server defaults it before admission.
	PodMatchCondition = `object.spec.dnsPolicy in ['Custom','ClusterFirstWithAutopath'] || (has(object.metadata.annotations) && ('pod.dnsplane.io/dns-params' in object.metadata.annotations || 'pod.dnsplane.io/dns-policy' in object.metadata.annotations))`

	// WorkloadMatchCondition selects the kinds with a pod template, in its
	// three places: spec.template (Deployment, ReplicaSet, StatefulSet,
	// DaemonSet, Job, ReplicationController), template (PodTemplate) and
	// spec.jobTemplate.spec.template (CronJob). Each level is tested with
	// has() first: a ReplicationController may have no template, and a
	// missing key is an evaluation error, which failurePolicy Fail would
	// turn into a refusal.
	WorkloadMatchCondition = `(has(object.spec) && has(object.spec.template) && ` + specTemplate + `) || ` +
		`(has(object.template) && ` + podTemplate + `) || ` +
		`(has(object.spec) && has(object.spec.jobTemplate) && has(object.spec.jobTemplate.spec) && has(object.spec.jobTemplate.spec.template) && ` + jobTemplate + `)`

	specTemplate = `((has(object.spec.template.spec) && has(object.spec.template.spec.dnsPolicy) && object.spec.template.spec.dnsPolicy in ['Custom','ClusterFirstWithAutopath']) || (has(object.spec.template.metadata) && has(object.spec.template.metadata.annotations) && ('pod.dnsplane.io/dns-params' in object.spec.template.metadata.annotations || 'pod.dnsplane.io/dns-policy' in object.spec.template.metadata.annotations)))`
	podTemplate  = `((has(object.template.spec) && has(object.template.spec.dnsPolicy) && object.template.spec.dnsPolicy in ['Custom','ClusterFirstWithAutopath']) || (has(object.template.metadata) && has(object.template.metadata.annotations) && ('pod.dnsplane.io/dns-params' in object.template.metadata.annotations || 'pod.dnsplane.io/dns-policy' in object.template.metadata.annotations)))`
	jobTemplate  = `((has(object.spec.jobTemplate.spec.template.spec) && has(object.spec.jobTemplate.spec.template.spec.dnsPolicy) && object.spec.jobTemplate.spec.template.spec.dnsPolicy in ['Custom','ClusterFirstWithAutopath']) || (has(object.spec.jobTemplate.spec.template.metadata) && has(object.spec.jobTemplate.spec.template.metadata.annotations) && ('pod.dnsplane.io/dns-params' in object.spec.jobTemplate.spec.template.metadata.annotations || 'pod.dnsplane.io/dns-policy' in object.spec.jobTemplate.spec.template.metadata.annotations)))`
)

// Names of the webhooks inside the configurations (contract of issue 30).
const (
	PodWebhookName      = "pods.dns.dnsplane.io"
	WorkloadWebhookName = "workloads.dns.dnsplane.io"
	DNSWebhookName      = "dnses.operator.dnsplane.io"
)
