{{- define "fleet-manager.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "fleet-manager.labels" -}}
{{ include "fleet-manager.selector" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "fleet-manager.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fleet-manager.databaseSecret" -}}
{{- .Values.database.existingSecret | default (printf "%s-database" (include "fleet-manager.fullname" .)) -}}
{{- end -}}

{{- define "fleet-manager.keysSecret" -}}
{{- printf "%s-keys" (include "fleet-manager.fullname" .) -}}
{{- end -}}

{{/* A key of the chart's keys Secret: the one given, else the installed
Secret's, else a new one. */}}
{{- define "fleet-manager.key" -}}
{{- if .given -}}
{{- .given | b64enc -}}
{{- else -}}
{{- $old := lookup "v1" "Secret" .root.Release.Namespace (include "fleet-manager.keysSecret" .root) -}}
{{- if and $old $old.data (index $old.data .key) -}}
{{- index $old.data .key -}}
{{- else -}}
{{- randAlphaNum 64 | b64enc -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The config file: the values' config with what the chart decides. */}}
{{- define "fleet-manager.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $_ := set $cfg "leader_election" (or .Values.leaderElection (gt (int .Values.replicas) 1)) -}}
{{- $auth := deepCopy (get $cfg "auth" | default dict) -}}
{{- if not (or $auth.rs256_key_file $auth.jwks_url) -}}
{{- $_ := set $auth "hs256_secret_file" "/etc/fleetkit/keys/hs256" -}}
{{- end -}}
{{- $_ := set $cfg "auth" $auth -}}
{{- if .Values.agent.enabled -}}
{{- $_ := set $cfg "data_plane" "agent" -}}
{{- $agent := deepCopy (get $cfg "agent" | default dict) -}}
{{- $_ := set $agent "token_secret_file" "/etc/fleetkit/keys/token-secret" -}}
{{- $_ := set $cfg "agent" $agent -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
