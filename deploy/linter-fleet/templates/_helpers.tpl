{{- define "linter-fleet.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "linter-fleet.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "linter-fleet.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "linter-fleet.secretName" -}}
{{- .Values.secret.existingSecret | default (printf "%s-secret" (include "linter-fleet.fullname" .)) -}}
{{- end -}}

{{/* A secret value: the one given, else the one the installed Secret holds, else a new one. */}}
{{- define "linter-fleet.secretValue" -}}
{{- $given := index .root.Values.secret .key -}}
{{- if $given -}}
{{- $given | b64enc -}}
{{- else -}}
{{- $old := lookup "v1" "Secret" .root.Release.Namespace (include "linter-fleet.secretName" .root) -}}
{{- if and $old $old.data (index $old.data .key) -}}
{{- index $old.data .key -}}
{{- else -}}
{{- randAlphaNum 32 | b64enc -}}
{{- end -}}
{{- end -}}
{{- end -}}
