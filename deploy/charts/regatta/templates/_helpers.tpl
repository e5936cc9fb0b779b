{{/* The release's name, or <release>-regatta when it does not say regatta. */}}
{{- define "regatta.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "regatta.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "regatta.labels" -}}
{{ include "regatta.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "regatta.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/*
regatta.validate fails the render on values that would install a regatta
that cannot work; each message names the value to fix.
*/}}
{{- define "regatta.validate" -}}
{{- $v := .Values -}}
{{- if not $v.fleet.repository.url -}}
{{- fail "fleet.repository.url is required: the URL of the fleet repository regatta follows (--repo)" -}}
{{- end -}}
{{- $auth := $v.fleet.repository.auth | default dict -}}
{{- if and (ne (default "none" $auth.type) "none") (not $auth.secretName) -}}
{{- fail (printf "fleet.repository.auth.secretName is required with fleet.repository.auth.type %s: the Secret holding the Git credentials" $auth.type) -}}
{{- end -}}
{{- if and (eq $v.replicasMode "shard") (lt (int $v.replicas) 2) -}}
{{- fail (printf "replicas is %d with replicasMode shard: sharding needs at least 2 replicas (use replicasMode standby for one)" (int $v.replicas)) -}}
{{- end -}}
{{- if and $v.agent.enabled (not $v.agent.cluster) -}}
{{- fail "agent.cluster is required with agent.enabled: the name of this cluster in the fleet repository (clusters/<name>/), which its cluster.yaml marks spec.mode: pull" -}}
{{- end -}}
{{- $sauth := $v.agent.statusAuth | default dict -}}
{{- if and $v.agent.enabled (ne (default "none" $sauth.type) "none") (not $sauth.secretName) -}}
{{- fail (printf "agent.statusAuth.secretName is required with agent.statusAuth.type %s: the Secret holding the Git credential of the agent's status pushes" $sauth.type) -}}
{{- end -}}
{{- if and $v.agent.enabled (eq $v.replicasMode "shard") -}}
{{- fail "agent.enabled reconciles one cluster: use replicasMode standby" -}}
{{- end -}}
{{- if and $v.verify.mode (not $v.verify.secretName) -}}
{{- fail (printf "verify.secretName is required with verify.mode %s: the Secret holding the trusted keys (*.asc, allowed_signers)" $v.verify.mode) -}}
{{- end -}}
{{- if and $v.verify.policyKey (not $v.verify.mode) -}}
{{- fail "verify.policyKey needs verify.mode head or every" -}}
{{- end -}}
{{- if and $v.webhook.enabled (not $v.webhook.secretName) -}}
{{- fail "webhook.secretName is required with webhook.enabled: the Secret whose key token is the webhook's shared secret" -}}
{{- end -}}
{{- if and $v.webhook.ingress.enabled (not $v.webhook.enabled) -}}
{{- fail "webhook.ingress.enabled needs webhook.enabled: the Ingress routes to the webhook Service" -}}
{{- end -}}
{{- if and $v.webhook.ingress.enabled (not $v.webhook.ingress.host) -}}
{{- fail "webhook.ingress.host is required with webhook.ingress.enabled" -}}
{{- end -}}
{{- include "regatta.validateUI" . -}}
{{- end -}}
