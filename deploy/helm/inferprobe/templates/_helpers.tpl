{{- define "inferprobe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "inferprobe.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "inferprobe.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "inferprobe.selectorLabels" -}}
app.kubernetes.io/name: {{ include "inferprobe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "inferprobe.labels" -}}
{{ include "inferprobe.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The scheme the daemon serves: HTTPS when the web configuration sets TLS. */}}
{{- define "inferprobe.scheme" -}}
{{- if and .Values.webConfig.secret .Values.webConfig.tls }}https{{ else }}http{{ end -}}
{{- end -}}

{{/* The relabelings of a scrape endpoint (its values as .): the job label the rules and
dashboards select (mixin/config.libsonnet's selector, job="inferprobe"), whatever the release's
name (the Prometheus Operator would name the job after the Service, or the PodMonitor), then
the endpoint's own. */}}
{{- define "inferprobe.relabelings" -}}
- targetLabel: job
  replacement: inferprobe
{{- with get . "relabelings" }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The checks a release must pass before anything renders. */}}
{{- define "inferprobe.validate" -}}
{{- if and .Values.serviceMonitor.enabled .Values.podMonitor.enabled -}}
{{- fail "serviceMonitor.enabled and podMonitor.enabled: pick one, or Prometheus scrapes every series twice" -}}
{{- end -}}
{{- if and .Values.burstAPI.enabled (not .Values.burstAPI.tokenSecret) (not (and .Values.webConfig.secret .Values.webConfig.basicAuth)) -}}
{{- fail "burstAPI.enabled: anyone reaching the port could load your targets; set burstAPI.tokenSecret (a Secret with key token) or webConfig.secret with basic auth (webConfig.basicAuth: true)" -}}
{{- end -}}
{{- if and (or .Values.webConfig.tls .Values.webConfig.basicAuth) (not .Values.webConfig.secret) -}}
{{- fail "webConfig.tls and webConfig.basicAuth describe webConfig.secret, which is not set" -}}
{{- end -}}
{{- end -}}

{{/* An HTTP probe of path, or a TCP check where basic auth would answer the kubelet 401. */}}
{{- define "inferprobe.probe" -}}
{{- if and .root.Values.webConfig.secret .root.Values.webConfig.basicAuth -}}
tcpSocket:
  port: http
{{- else -}}
httpGet:
  path: {{ .path }}
  port: http
  scheme: {{ include "inferprobe.scheme" .root | upper }}
{{- end -}}
{{- end -}}

{{/* The pod template shared by the Deployment (shards = 1) and the StatefulSet (shards > 1). */}}
{{- define "inferprobe.podTemplate" -}}
metadata:
  labels:
    {{- include "inferprobe.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # The daemon reads the scenario at start; a changed scenario rolls the pods.
    checksum/scenario: {{ .Values.scenario | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  # inferprobe never talks to the Kubernetes API.
  automountServiceAccountToken: false
  enableServiceLinks: false
  # The grace period, up to 5s for the workers, then the web server.
  terminationGracePeriodSeconds: {{ add .Values.shutdownGracePeriodSeconds 20 }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
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
      {{- if or (gt (int .Values.shards) 1) .Values.extraEnv }}
      env:
        {{- if gt (int .Values.shards) 1 }}
        # Set by the StatefulSet controller on each pod; read through the downward API
        # because the image has no shell to parse the pod name.
        - name: SHARD_INDEX
          valueFrom:
            fieldRef:
              fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      args:
        - serve
        - --config.file=/etc/inferprobe/config/scenario.yml
        - --storage.path=/var/lib/inferprobe
        - --shutdown.grace-period={{ .Values.shutdownGracePeriodSeconds }}s
        - --workers={{ .Values.workers }}
        {{- if gt (int .Values.shards) 1 }}
        - --shard=$(SHARD_INDEX)/{{ .Values.shards }}
        - --cluster.peers=dns+srv://_http._tcp.{{ include "inferprobe.fullname" . }}.{{ .Release.Namespace }}.svc
        {{- end }}
        {{- if .Values.webConfig.secret }}
        - --web.config.file=/etc/inferprobe/web/web-config.yml
        {{- end }}
        {{- if .Values.burstAPI.enabled }}
        - --web.enable-burst-api
        {{- if .Values.burstAPI.tokenSecret }}
        - --web.burst-api.token-file=/etc/inferprobe/burst-api/token
        {{- end }}
        {{- end }}
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: 9470
      livenessProbe:
        {{- include "inferprobe.probe" (dict "root" . "path" "/-/healthy") | nindent 8 }}
        periodSeconds: 10
        failureThreshold: 6
      readinessProbe:
        {{- include "inferprobe.probe" (dict "root" . "path" "/-/ready") | nindent 8 }}
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
        {{- if .Values.webConfig.secret }}
        - name: web-config
          mountPath: /etc/inferprobe/web
          readOnly: true
        {{- end }}
        {{- if and .Values.burstAPI.enabled .Values.burstAPI.tokenSecret }}
        - name: burst-api-token
          mountPath: /etc/inferprobe/burst-api
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
    {{- if .Values.webConfig.secret }}
    - name: web-config
      secret:
        secretName: {{ .Values.webConfig.secret }}
        defaultMode: 0400
    {{- end }}
    {{- if and .Values.burstAPI.enabled .Values.burstAPI.tokenSecret }}
    - name: burst-api-token
      secret:
        secretName: {{ .Values.burstAPI.tokenSecret }}
        defaultMode: 0400
    {{- end }}
    {{- if le (int .Values.shards) 1 }}
    - name: data
      emptyDir:
        sizeLimit: {{ .Values.storage.size }}
    {{- end }}
{{- end -}}
