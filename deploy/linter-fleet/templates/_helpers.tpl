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

{{/* The machine manager's configuration: the one given, with what the chart
decides — where the balancer is and its secret, the state file, the
languages' images. */}}
{{- define "linter-fleet.managerConfig" -}}
{{- $full := include "linter-fleet.fullname" . }}
{{- $lint := .Values.images.linter }}
{{- $cfg := deepCopy (.Values.machineManager.config | default dict) }}
{{- $adminURL := .Values.machineManager.balancerAddress | default (printf "http://%s-balancer:%v" $full .Values.balancer.service.adminPort) }}
{{- $bal := deepCopy (get $cfg "balancer" | default dict) }}
{{- $_ := set $bal "address" $adminURL }}
{{- $_ := set $bal "metrics_url" (printf "%s/metrics" $adminURL) }}
{{- $_ := set $bal "secret_file" "/etc/fleetkit/secret/admin" }}
{{- $_ := set $cfg "balancer" $bal }}
{{- $_ := set $cfg "state_file" "/var/lib/fleetkit/state.json" }}
{{- $langs := dict }}
{{- range $lang, $l := .Values.languages }}
{{- $versions := dict }}
{{- range $v, $spec := $l.versions }}
{{- $vs := dict "image" (printf "%s:%s" $lint.repository ($spec.tag | default $v)) }}
{{- with $spec.args }}{{ $_ := set $vs "args" . }}{{ end }}
{{- $_ := set $versions $v $vs }}
{{- end }}
{{- $_ := set $langs $lang (dict "version" $l.version "versions" $versions) }}
{{- end }}
{{- $_ := set $cfg "languages" $langs }}
{{- toYaml $cfg }}
{{- end -}}
