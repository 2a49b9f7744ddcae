{{/*
Labels every object of the release carries; selectorLabels are the
immutable subset Deployments and DaemonSets select on.
*/}}
{{- define "dnsplane.labels" -}}
app.kubernetes.io/name: dnsplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: dnsplane
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "dnsplane.selectorLabels" -}}
app.kubernetes.io/name: dnsplane
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "dnsplane.image" -}}
{{ .repository }}:{{ .tag }}
{{- end -}}

{{/*
The operator keeps its objects in dnsplane-system (internal/operator
Namespace) and the webhook configurations name the Service there: the
release must live in it.
*/}}
{{- define "dnsplane.namespace" -}}
{{- if ne .Release.Namespace "dnsplane-system" -}}
{{- fail (printf "install dnsplane into the namespace dnsplane-system (helm install ... -n dnsplane-system --create-namespace), not %q: the operator manages its objects there" .Release.Namespace) -}}
{{- end -}}
{{ .Release.Namespace }}
{{- end -}}

{{/* Pod securityContext of the unprivileged components. */}}
{{- define "dnsplane.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "dnsplane.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}
