{{- define "kdave.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kdave.labels" -}}
{{ include "kdave.selector" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kdave.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* A Go duration of hours, minutes and seconds ("1h30m", "90s") in seconds. */}}
{{- define "kdave.seconds" -}}
{{- $d := toString . -}}
{{- $s := 0 -}}
{{- range regexFindAll "[0-9]+[hms]" $d -1 -}}
{{- $n := int (trimSuffix "h" (trimSuffix "m" (trimSuffix "s" .))) -}}
{{- if hasSuffix "h" . }}{{ $s = add $s (mul $n 3600) }}{{ else if hasSuffix "m" . }}{{ $s = add $s (mul $n 60) }}{{ else }}{{ $s = add $s $n }}{{ end -}}
{{- end -}}
{{- if ne (regexFindAll "[0-9]+[hms]" $d -1 | join "") $d }}{{ fail (printf "scan.interval %q: give hours, minutes and seconds, e.g. 1h or 90m" $d) }}{{ end -}}
{{- $s -}}
{{- end -}}
