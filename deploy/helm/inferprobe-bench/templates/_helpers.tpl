{{- define "bench.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "bench.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "bench.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "bench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "bench.labels" -}}
{{ include "bench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* This run's directory on the results volume: named by its start, so runs never mix. */}}
{{- define "bench.runDir" -}}
{{- if not .Values.startAt -}}
{{- fail "startAt: set the run's start, a few minutes ahead: --set startAt=$(date -u -d +3min +%FT%TZ)" -}}
{{- end -}}
/results/{{ .Values.startAt }}
{{- end -}}

{{- define "bench.claim" -}}
{{- .Values.results.existingClaim | default (printf "%s-results" (include "bench.fullname" .)) -}}
{{- end -}}

{{/* What the shards' and the merge's pods share: security, scheduling, the results volume. */}}
{{- define "bench.podSpec" -}}
restartPolicy: Never
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  fsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
volumes:
  - name: results
    persistentVolumeClaim:
      claimName: {{ include "bench.claim" . }}
{{- end -}}

{{- define "bench.containerSecurity" -}}
securityContext:
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
volumeMounts:
  - name: results
    mountPath: /results
{{- end -}}
