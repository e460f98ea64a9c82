{{- define "inferprobe.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "inferprobe.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "inferprobe.labels" -}}
{{ include "inferprobe.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The pod template shared by the Deployment (shards = 1) and the StatefulSet (shards > 1). */}}
{{- define "inferprobe.podTemplate" -}}
metadata:
  labels:
    {{- include "inferprobe.selectorLabels" . | nindent 4 }}
  annotations:
    # The daemon reads the scenario at start; a changed scenario rolls the pods.
    checksum/scenario: {{ .Values.scenario | sha256sum }}
spec:
  # inferprobe never talks to the Kubernetes API.
  automountServiceAccountToken: false
  enableServiceLinks: false
  # The grace period, up to 5s for the workers, then the web server.
  terminationGracePeriodSeconds: {{ add .Values.shutdownGracePeriodSeconds 20 }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: inferprobe
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- if gt (int .Values.shards) 1 }}
      env:
        # Set by the StatefulSet controller on each pod; read through the downward API
        # because the image has no shell to parse the pod name.
        - name: SHARD_INDEX
          valueFrom:
            fieldRef:
              fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
      {{- end }}
      args:
        - serve
        - --config.file=/etc/inferprobe/config/scenario.yml
        - --storage.path=/var/lib/inferprobe
        - --shutdown.grace-period={{ .Values.shutdownGracePeriodSeconds }}s
        - --workers={{ .Values.workers }}
        {{- if gt (int .Values.shards) 1 }}
        - --shard=$(SHARD_INDEX)/{{ .Values.shards }}
        {{- end }}
      ports:
        - name: http
          containerPort: 9470
      livenessProbe:
        httpGet:
          path: /-/healthy
          port: http
        periodSeconds: 10
        failureThreshold: 6
      readinessProbe:
        httpGet:
          path: /-/ready
          port: http
        periodSeconds: 5
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        runAsNonRoot: true
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: [ALL]
      volumeMounts:
        - name: scenario
          mountPath: /etc/inferprobe/config
          readOnly: true
        {{- if .Values.apiKeySecret }}
        - name: api-key
          mountPath: /etc/inferprobe/secrets
          readOnly: true
        {{- end }}
        - name: data
          mountPath: /var/lib/inferprobe
  volumes:
    - name: scenario
      configMap:
        name: {{ include "inferprobe.fullname" . }}-scenario
    {{- if .Values.apiKeySecret }}
    - name: api-key
      secret:
        secretName: {{ .Values.apiKeySecret }}
        defaultMode: 0400
    {{- end }}
    {{- if le (int .Values.shards) 1 }}
    - name: data
      emptyDir:
        sizeLimit: {{ .Values.storage.size }}
    {{- end }}
{{- end -}}
