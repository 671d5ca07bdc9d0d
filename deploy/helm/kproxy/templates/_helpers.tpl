{{/* Chart name, truncated to what a label allows. */}}
{{- define "kproxy.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified name of every object. */}}
{{- define "kproxy.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kproxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kproxy.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end -}}

{{- define "kproxy.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kproxy.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kproxy.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Where the chart mounts what kproxy reads. */}}
{{- define "kproxy.configDir" -}}/etc/kproxy/config{{- end -}}
{{- define "kproxy.listenerTLSDir" -}}/etc/kproxy/tls/listener{{- end -}}
{{- define "kproxy.upstreamTLSDir" -}}/etc/kproxy/tls/upstream{{- end -}}
{{- define "kproxy.upstreamSASLDir" -}}/etc/kproxy/sasl/upstream{{- end -}}

{{/* The advertised host: 127.0.0.1 in a sidecar, else the value or the Service's cluster DNS name. */}}
{{- define "kproxy.advertisedHost" -}}
{{- if eq .Values.mode "sidecar" -}}
127.0.0.1
{{- else -}}
{{- default (printf "%s.%s.svc.%s" (include "kproxy.fullname" .) .Release.Namespace .Values.clusterDomain) .Values.advertisedHost -}}
{{- end -}}
{{- end -}}

{{/*
Port name of broker node N. Kubernetes port names are at most 15
characters, which leaves node ids of up to 8 digits.
*/}}
{{- define "kproxy.brokerPortName" -}}
{{- $name := printf "broker-%d" (int .) -}}
{{- if gt (len $name) 15 -}}{{- fail (printf "brokers.nodeIds: %d is too long for a port name (%s)" (int .) $name) -}}{{- end -}}
{{- $name -}}
{{- end -}}

{{/* Checks of values that would otherwise render a kproxy that cannot start. */}}
{{- define "kproxy.validate" -}}
{{- if not (has .Values.mode (list "gateway" "sidecar")) -}}
{{- fail (printf "mode: %q must be gateway or sidecar" .Values.mode) -}}
{{- end -}}
{{- if empty .Values.upstream.bootstrapServers -}}
{{- fail "upstream.bootstrapServers: list the upstream cluster's host:port addresses" -}}
{{- end -}}
{{- if empty .Values.brokers.nodeIds -}}
{{- fail "brokers.nodeIds: list the upstream cluster's broker node ids" -}}
{{- end -}}
{{- range .Values.brokers.nodeIds -}}
{{- if gt (add $.Values.ports.brokerPortBase .) 65535 -}}
{{- fail (printf "brokers.nodeIds: node %d maps to port %d (ports.brokerPortBase + id), beyond 65535" (int .) (add $.Values.ports.brokerPortBase . | int)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.upstream.sasl.enabled (not .Values.upstream.sasl.passwordSecret.name) -}}
{{- fail "upstream.sasl.passwordSecret.name: name the Secret holding kproxy's upstream SASL password" -}}
{{- end -}}
{{- if and .Values.listeners.tls.enabled (not .Values.listeners.tls.secretName) -}}
{{- fail "listeners.tls.secretName: name the kubernetes.io/tls Secret with kproxy's certificate" -}}
{{- end -}}
{{- end -}}

{{/*
kproxy.restartConfig: every key of kproxy.yaml that takes effect only at
start (all but policy and audit.log_allowed), as YAML. Its checksum is the
pods' checksum/config annotation, so changing one of these rolls the pods
and changing the policy does not.
*/}}
{{- define "kproxy.restartConfig" -}}
{{- $v := .Values -}}
{{- $up := dict "bootstrap_servers" $v.upstream.bootstrapServers -}}
{{- with $v.upstream.dialTimeout }}{{ $_ := set $up "dial_timeout" . }}{{ end -}}
{{- if $v.upstream.tls.enabled -}}
{{- $tls := dict -}}
{{- if $v.upstream.tls.secretName }}{{ $_ := set $tls "ca_file" (printf "%s/ca.crt" (include "kproxy.upstreamTLSDir" .)) }}{{ end -}}
{{- if $v.upstream.tls.clientCertificate -}}
{{- $_ := set $tls "cert_file" (printf "%s/tls.crt" (include "kproxy.upstreamTLSDir" .)) -}}
{{- $_ := set $tls "key_file" (printf "%s/tls.key" (include "kproxy.upstreamTLSDir" .)) -}}
{{- end -}}
{{- with $v.upstream.tls.serverName }}{{ $_ := set $tls "server_name" . }}{{ end -}}
{{- $_ := set $up "tls" $tls -}}
{{- end -}}
{{- if $v.upstream.sasl.enabled -}}
{{- $_ := set $up "sasl" (dict "mechanism" $v.upstream.sasl.mechanism "username" $v.upstream.sasl.username "password_file" (printf "%s/%s" (include "kproxy.upstreamSASLDir" .) $v.upstream.sasl.passwordSecret.key)) -}}
{{- end -}}
{{- $bind := ternary "127.0.0.1" "0.0.0.0" (eq $v.mode "sidecar") -}}
{{- $ln := dict "bind_host" $bind "advertised_host" (include "kproxy.advertisedHost" .) "bootstrap_port" $v.ports.bootstrap "broker_port_base" $v.ports.brokerPortBase -}}
{{- if $v.listeners.tls.enabled -}}
{{- $tls := dict "cert_file" (printf "%s/tls.crt" (include "kproxy.listenerTLSDir" .)) "key_file" (printf "%s/tls.key" (include "kproxy.listenerTLSDir" .)) "client_auth" $v.listeners.tls.clientAuth -}}
{{- if ne $v.listeners.tls.clientAuth "none" }}{{ $_ := set $tls "client_ca_file" (printf "%s/ca.crt" (include "kproxy.listenerTLSDir" .)) }}{{ end -}}
{{- with $v.listeners.tls.principalFrom }}{{ $_ := set $tls "principal_from" . }}{{ end -}}
{{- $_ := set $ln "tls" $tls -}}
{{- end -}}
{{- if $v.listeners.sasl.enabled -}}
{{- $sasl := dict "mode" $v.listeners.sasl.mode -}}
{{- with $v.listeners.sasl.mechanisms }}{{ $_ := set $sasl "mechanisms" . }}{{ end -}}
{{- with $v.listeners.sasl.sessionLifetime }}{{ $_ := set $sasl "session_lifetime" . }}{{ end -}}
{{- with $v.listeners.sasl.users }}{{ $_ := set $sasl "users" . }}{{ end -}}
{{- $_ := set $ln "sasl" $sasl -}}
{{- end -}}
{{- with $v.listeners.proxyProtocol -}}
{{- if and .mode (ne .mode "off") -}}
{{- $_ := set $ln "proxy_protocol" (dict "mode" .mode "trusted_cidrs" (default list .trustedCidrs)) -}}
{{- end -}}
{{- end -}}
{{- $cfg := dict "upstream" $up "listeners" $ln "admin" (dict "listen" (printf "0.0.0.0:%d" (int $v.ports.admin))) "log" $v.log -}}
{{- with $v.limits }}{{ $_ := set $cfg "limits" . }}{{ end -}}
{{- with (omit $v.audit "log_allowed") }}{{ $_ := set $cfg "audit" . }}{{ end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* kproxy.config: the whole kproxy.yaml, the restart keys plus what kproxy reloads. */}}
{{- define "kproxy.config" -}}
{{- $cfg := include "kproxy.restartConfig" . | fromYaml -}}
{{- with .Values.policy }}{{ $_ := set $cfg "policy" . }}{{ end -}}
{{- if hasKey .Values.audit "log_allowed" -}}
{{- $audit := default dict (get $cfg "audit") -}}
{{- $_ := set $audit "log_allowed" .Values.audit.log_allowed -}}
{{- $_ := set $cfg "audit" $audit -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* Pod template annotations: the restart-keys checksum and the user's. */}}
{{- define "kproxy.podAnnotations" -}}
checksum/config: {{ include "kproxy.restartConfig" . | sha256sum }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The kproxy container (gateway pods and the sidecar). */}}
{{- define "kproxy.container" -}}
name: kproxy
image: {{ include "kproxy.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
args: ["--config", "{{ include "kproxy.configDir" . }}/kproxy.yaml"]
{{- if and (eq .Values.mode "sidecar") .Values.sidecar.native }}
restartPolicy: Always
{{- end }}
ports:
  - {name: bootstrap, containerPort: {{ .Values.ports.bootstrap }}, protocol: TCP}
  {{- range .Values.brokers.nodeIds }}
  - {name: {{ include "kproxy.brokerPortName" . }}, containerPort: {{ add $.Values.ports.brokerPortBase . }}, protocol: TCP}
  {{- end }}
  - {name: admin, containerPort: {{ .Values.ports.admin }}, protocol: TCP}
{{- with .Values.extraEnv }}
env:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if eq .Values.mode "sidecar" }}
startupProbe:
  httpGet: {path: /readyz, port: admin}
  periodSeconds: 1
  failureThreshold: 120
{{- end }}
readinessProbe:
  httpGet: {path: /readyz, port: admin}
  {{- toYaml .Values.probes.readiness | nindent 2 }}
livenessProbe:
  httpGet: {path: /healthz, port: admin}
  {{- toYaml .Values.probes.liveness | nindent 2 }}
resources:
  {{- toYaml .Values.resources | nindent 2 }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  # The whole ConfigMap as a directory (never subPath): kubelet swaps the
  # file on an update and kproxy, polling it, reloads the policy.
  - {name: config, mountPath: {{ include "kproxy.configDir" . }}, readOnly: true}
  {{- if .Values.listeners.tls.enabled }}
  - {name: listener-tls, mountPath: {{ include "kproxy.listenerTLSDir" . }}, readOnly: true}
  {{- end }}
  {{- if and .Values.upstream.tls.enabled .Values.upstream.tls.secretName }}
  - {name: upstream-tls, mountPath: {{ include "kproxy.upstreamTLSDir" . }}, readOnly: true}
  {{- end }}
  {{- if .Values.upstream.sasl.enabled }}
  - {name: upstream-sasl, mountPath: {{ include "kproxy.upstreamSASLDir" . }}, readOnly: true}
  {{- end }}
{{- end -}}

{{/* The volumes the kproxy container mounts. */}}
{{- define "kproxy.volumes" -}}
- name: config
  configMap:
    name: {{ include "kproxy.fullname" . }}
{{- if .Values.listeners.tls.enabled }}
- name: listener-tls
  secret:
    secretName: {{ .Values.listeners.tls.secretName }}
{{- end }}
{{- if and .Values.upstream.tls.enabled .Values.upstream.tls.secretName }}
- name: upstream-tls
  secret:
    secretName: {{ .Values.upstream.tls.secretName }}
{{- end }}
{{- if .Values.upstream.sasl.enabled }}
- name: upstream-sasl
  secret:
    secretName: {{ .Values.upstream.sasl.passwordSecret.name }}
    items:
      - {key: {{ .Values.upstream.sasl.passwordSecret.key }}, path: {{ .Values.upstream.sasl.passwordSecret.key }}}
{{- end }}
{{- end -}}

{{/* Service ports: bootstrap and one per broker, the container's numbers. */}}
{{- define "kproxy.servicePorts" -}}
- {name: bootstrap, port: {{ .Values.ports.bootstrap }}, targetPort: bootstrap, protocol: TCP}
{{- range .Values.brokers.nodeIds }}
- {name: {{ include "kproxy.brokerPortName" . }}, port: {{ add $.Values.ports.brokerPortBase . }}, targetPort: {{ include "kproxy.brokerPortName" . }}, protocol: TCP}
{{- end }}
{{- end -}}
