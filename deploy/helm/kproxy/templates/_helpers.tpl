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

{{/* The Prometheus job of kproxy's scrapes: deploy/prometheus/alerts.yaml matches kproxy.* */}}
{{- define "kproxy.job" -}}kproxy{{- end -}}

{{- define "kproxy.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Where the chart mounts what kproxy reads. */}}
{{- define "kproxy.configDir" -}}/etc/kproxy/config{{- end -}}
{{- define "kproxy.listenerTLSDir" -}}/etc/kproxy/tls/listener{{- end -}}
{{- define "kproxy.upstreamTLSDir" -}}/etc/kproxy/tls/upstream{{- end -}}
{{- define "kproxy.upstreamSASLDir" -}}/etc/kproxy/sasl/upstream{{- end -}}
{{- define "kproxy.awsCredentialsDir" -}}/etc/kproxy/aws{{- end -}}
{{- define "kproxy.upstreamOAuthDir" -}}/etc/kproxy/oauth/upstream{{- end -}}
{{- define "kproxy.tokenEndpointCADir" -}}/etc/kproxy/tls/token-endpoint{{- end -}}
{{- define "kproxy.sniTLSDir" -}}/etc/kproxy/tls/sni{{- end -}}
{{- define "kproxy.sniCertificatesDir" -}}/etc/kproxy/tls/sni-certificates{{- end -}}

{{/* Where kproxy listens: the pod's loopback in a sidecar, every address in a gateway. */}}
{{- define "kproxy.bindHost" -}}{{ ternary "127.0.0.1" "0.0.0.0" (eq .Values.mode "sidecar") }}{{- end -}}
{{- define "kproxy.adminBindHost" -}}{{ include "kproxy.bindHost" . }}{{- end -}}

{{/*
A probe of an admin path, (list $ path): in a gateway, kubelet's GET on the
pod address; in a sidecar, whose admin listener is on the pod's loopback
(its /config shows user names and the policy), kproxy probe run inside
the container, the image having no shell.
*/}}
{{- define "kproxy.probeAction" -}}
{{- $ := index . 0 -}}
{{- if eq $.Values.mode "sidecar" -}}
exec: {command: ["/kproxy", "probe", "http://127.0.0.1:{{ $.Values.ports.admin }}{{ index . 1 }}"]}
{{- else -}}
httpGet: {path: {{ index . 1 }}, port: admin}
{{- end -}}
{{- end -}}

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

{{/* The upstream's node ids as a JSON list: brokers.nodeIds, or 0..N-1 when it is a count N. */}}
{{- define "kproxy.nodeIds" -}}
{{- $ids := .Values.brokers.nodeIds -}}
{{- if kindIs "slice" $ids -}}{{ toJson $ids }}{{- else -}}{{ toJson (untilStep 0 (int $ids) 1) }}{{- end -}}
{{- end -}}

{{/*
Every port kproxy serves Kafka clients on, as a JSON list of {name, port}:
bootstrap and one per broker (listeners.brokers[].port overriding
brokerPortBase + id), the SNI port, and each virtual cluster's.
*/}}
{{- define "kproxy.kafkaPorts" -}}
{{- $v := .Values -}}
{{- $ids := include "kproxy.nodeIds" . | fromJsonArray -}}
{{- $ports := list -}}
{{- $served := empty $v.virtualClusters -}}
{{- if and $served $v.listeners.portPerBroker -}}
{{- $ports = append $ports (dict "name" "bootstrap" "port" (int $v.ports.bootstrap)) -}}
{{- $override := dict -}}
{{- range $v.listeners.brokers }}{{ if .port }}{{ $_ := set $override (toString (int .node_id)) (int .port) }}{{ end }}{{ end -}}
{{- range $ids -}}
{{- $port := get $override (toString (int .)) | default (add $v.ports.brokerPortBase .) -}}
{{- $ports = append $ports (dict "name" (include "kproxy.brokerPortName" .) "port" (int $port)) -}}
{{- end -}}
{{- end -}}
{{- if and $served $v.listeners.sni.enabled -}}
{{- $ports = append $ports (dict "name" "sni" "port" (int $v.listeners.sni.port)) -}}
{{- end -}}
{{- range $i, $vc := $v.virtualClusters -}}
{{- $l := default dict $vc.listeners -}}
{{- with $l.bootstrap_port }}{{ $ports = append $ports (dict "name" (printf "vc%d-bootstrap" $i) "port" (int .)) }}{{ end -}}
{{- with $l.broker_port_base -}}
{{- $base := . -}}
{{- range $ids }}{{ $ports = append $ports (dict "name" (printf "vc%d-%d" $i (int .)) "port" (add $base . | int)) }}{{ end -}}
{{- end -}}
{{- with $l.sni }}{{ with .port }}{{ $ports = append $ports (dict "name" (printf "vc%d-sni" $i) "port" (int .)) }}{{ end }}{{ end -}}
{{- end -}}
{{- range $ports -}}
{{- if gt (len .name) 15 }}{{ fail (printf "brokers.nodeIds: port name %s is longer than Kubernetes allows (15)" .name) }}{{ end -}}
{{- if gt (int .port) 65535 }}{{ fail (printf "brokers.nodeIds: %s maps to port %d, beyond 65535" .name (int .port)) }}{{ end -}}
{{- end -}}
{{- toJson $ports -}}
{{- end -}}

{{/* Checks of values that would otherwise render a kproxy that cannot start. */}}
{{- define "kproxy.validate" -}}
{{- if not (has .Values.mode (list "gateway" "sidecar")) -}}
{{- fail (printf "mode: %q must be gateway or sidecar" .Values.mode) -}}
{{- end -}}
{{- $userConfig := or .Values.existingConfigMap .Values.existingSecret -}}
{{- if and .Values.existingConfigMap .Values.existingSecret -}}
{{- fail "existingConfigMap, existingSecret: name one object holding kproxy.yaml, not both" -}}
{{- end -}}
{{- if and (empty .Values.upstream.bootstrapServers) (empty .Values.upstream.embedded) (not $userConfig) -}}
{{- fail "upstream.bootstrapServers: list the upstream cluster's host:port addresses" -}}
{{- end -}}
{{- if empty (include "kproxy.nodeIds" . | fromJsonArray) -}}
{{- fail "brokers.nodeIds: list the upstream cluster's broker node ids, or give their count" -}}
{{- end -}}
{{- range include "kproxy.nodeIds" . | fromJsonArray -}}
{{- if gt (add $.Values.ports.brokerPortBase .) 65535 -}}
{{- fail (printf "brokers.nodeIds: node %d maps to port %d (ports.brokerPortBase + id), beyond 65535" (int .) (add $.Values.ports.brokerPortBase . | int)) -}}
{{- end -}}
{{- end -}}
{{- $_ := include "kproxy.kafkaPorts" . -}}
{{- with .Values.upstream.sasl -}}
{{- if and .enabled (eq .mechanism "OAUTHBEARER") (not .clientSecretSecret.name) -}}
{{- fail "upstream.sasl.clientSecretSecret.name: name the Secret holding kproxy's OAuth client secret" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.listeners.sni.enabled (not .Values.listeners.sni.secretName) -}}
{{- fail "listeners.sni.secretName: name the kubernetes.io/tls Secret the SNI listener serves" -}}
{{- end -}}
{{- if and .Values.upstream.sasl.enabled (ne .Values.upstream.sasl.mechanism "OAUTHBEARER") (not .Values.upstream.sasl.passwordSecret.name) -}}
{{- fail "upstream.sasl.passwordSecret.name: name the Secret holding kproxy's upstream SASL password" -}}
{{- end -}}
{{- if and (include "kproxy.awsCredentialsNamed" .Values.awsCredentials) (include "kproxy.awsCredentialsNamed" .Values.kmsCredentials) -}}
{{- fail "awsCredentials, kmsCredentials: name the Secret in awsCredentials alone, not both (kmsCredentials is its deprecated former name)" -}}
{{- end -}}
{{- $awsKey := include "kproxy.awsCredentialsKey" . -}}
{{- with index .Values $awsKey -}}
{{- if and .envSecret.name .fileSecret.name -}}
{{- fail (printf "%s: name envSecret or fileSecret, not both (the AWS SDK would use envSecret's and ignore the file)" $awsKey) -}}
{{- end -}}
{{- if and .envSecret.name (not (and .envSecret.accessKeyIdKey .envSecret.secretAccessKeyKey)) -}}
{{- fail (printf "%s.envSecret: accessKeyIdKey and secretAccessKeyKey name the Secret's keys holding the access key" $awsKey) -}}
{{- end -}}
{{- if and .fileSecret.name (not .fileSecret.key) -}}
{{- fail (printf "%s.fileSecret.key: name the Secret's key holding the shared credentials file" $awsKey) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.listeners.tls.enabled (not .Values.listeners.tls.secretName) -}}
{{- fail "listeners.tls.secretName: name the kubernetes.io/tls Secret with kproxy's certificate" -}}
{{- end -}}
{{- end -}}

{{/*
kproxy.restartConfig: every key of kproxy.yaml that takes effect only at
start, as YAML: all but what kproxy reloads, which is the policy (each
virtual cluster's too), audit.log_allowed, encryption's topics and
on_missing_key (at the top level and per virtual cluster; its kms and dek,
and adding or removing the section, need a restart), and large_messages'
topics and resolve_on_fetch (likewise). Its checksum is the
pods' checksum/config annotation, so changing one of these rolls the pods
and changing what kproxy reloads does not.
*/}}
{{- define "kproxy.restartConfig" -}}
{{- $cfg := include "kproxy.baseConfig" . | fromYaml -}}
{{- with $cfg.encryption }}{{ $_ := set $cfg "encryption" (include "kproxy.encryptionRestartKeys" . | fromYaml) }}{{ end -}}
{{- with $cfg.large_messages }}{{ $_ := set $cfg "large_messages" (include "kproxy.largeMessagesRestartKeys" . | fromYaml) }}{{ end -}}
{{- with $cfg.virtual_clusters -}}
{{- $vcs := list -}}
{{- range . -}}
{{- $vc := omit . "policy" -}}
{{- with $vc.encryption }}{{ $_ := set $vc "encryption" (include "kproxy.encryptionRestartKeys" . | fromYaml) }}{{ end -}}
{{- with $vc.large_messages }}{{ $_ := set $vc "large_messages" (include "kproxy.largeMessagesRestartKeys" . | fromYaml) }}{{ end -}}
{{- $vcs = append $vcs $vc -}}
{{- end -}}
{{- $_ := set $cfg "virtual_clusters" $vcs -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
An encryption section's keys a reload does not apply: kms and dek. The
section stays (as {} at least) so that adding or removing it, which kproxy
applies only at start, changes the checksum.
*/}}
{{- define "kproxy.encryptionRestartKeys" -}}
{{- toYaml (omit . "topics" "on_missing_key") -}}
{{- end -}}

{{/*
A large_messages section's keys a reload does not apply: the store,
pointer_format and max_object_bytes (kproxy reloads topics and
resolve_on_fetch). The section stays, as for encryption.
*/}}
{{- define "kproxy.largeMessagesRestartKeys" -}}
{{- toYaml (omit . "topics" "resolve_on_fetch") -}}
{{- end -}}

{{/* kproxy.baseConfig: kproxy.yaml without the policy and audit.log_allowed. */}}
{{- define "kproxy.baseConfig" -}}
{{- $v := .Values -}}
{{- $cfg := dict "upstream" (include "kproxy.upstreamConfig" . | fromYaml) "listeners" (include "kproxy.listenersConfig" . | fromYaml) "log" $v.log -}}
{{- $admin := dict "listen" (printf "%s:%d" (include "kproxy.adminBindHost" .) (int $v.ports.admin)) -}}
{{- if $v.admin.pprof }}{{ $_ := set $admin "pprof" true }}{{ end -}}
{{- $_ := set $cfg "admin" $admin -}}
{{- range $key := list "limits" "tracing" "metrics" "encryption" -}}
{{- with (get $v $key) }}{{ $_ := set $cfg $key . }}{{ end -}}
{{- end -}}
{{- with $v.largeMessages }}{{ $_ := set $cfg "large_messages" . }}{{ end -}}
{{- with $v.virtualClusters }}{{ $_ := set $cfg "virtual_clusters" . }}{{ end -}}
{{- with (omit $v.audit "log_allowed") }}{{ $_ := set $cfg "audit" . }}{{ end -}}
{{- $cfg = mergeOverwrite $cfg (omit (deepCopy $v.extraConfig) "policy") -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* upstream: the cluster, TLS and kproxy's own SASL login. */}}
{{- define "kproxy.upstreamConfig" -}}
{{- $u := .Values.upstream -}}
{{- $up := dict -}}
{{- with $u.bootstrapServers }}{{ $_ := set $up "bootstrap_servers" . }}{{ end -}}
{{- with $u.dialTimeout }}{{ $_ := set $up "dial_timeout" . }}{{ end -}}
{{- with $u.metadataRefresh }}{{ $_ := set $up "metadata_refresh" . }}{{ end -}}
{{- with $u.reconnectBackoff }}{{ $_ := set $up "reconnect_backoff" . }}{{ end -}}
{{- with $u.reconnectBackoffMax }}{{ $_ := set $up "reconnect_backoff_max" . }}{{ end -}}
{{- with $u.embedded }}{{ $_ := set $up "embedded" . }}{{ end -}}
{{- if $u.tls.enabled -}}
{{- $tls := dict -}}
{{- if $u.tls.secretName }}{{ $_ := set $tls "ca_file" (printf "%s/ca.crt" (include "kproxy.upstreamTLSDir" .)) }}{{ end -}}
{{- if $u.tls.clientCertificate -}}
{{- $_ := set $tls "cert_file" (printf "%s/tls.crt" (include "kproxy.upstreamTLSDir" .)) -}}
{{- $_ := set $tls "key_file" (printf "%s/tls.key" (include "kproxy.upstreamTLSDir" .)) -}}
{{- end -}}
{{- with $u.tls.serverName }}{{ $_ := set $tls "server_name" . }}{{ end -}}
{{- if $u.tls.insecureSkipVerify }}{{ $_ := set $tls "insecure_skip_verify" true }}{{ end -}}
{{- $_ := set $up "tls" $tls -}}
{{- end -}}
{{- if $u.sasl.enabled -}}
{{- $s := $u.sasl -}}
{{- $sasl := dict "mechanism" $s.mechanism -}}
{{- if eq $s.mechanism "OAUTHBEARER" -}}
{{- $_ := set $sasl "token_endpoint" $s.tokenEndpoint -}}
{{- $_ := set $sasl "client_id" $s.clientId -}}
{{- $_ := set $sasl "client_secret_file" (printf "%s/%s" (include "kproxy.upstreamOAuthDir" .) $s.clientSecretSecret.key) -}}
{{- with $s.scope }}{{ $_ := set $sasl "scope" . }}{{ end -}}
{{- with $s.tokenTimeout }}{{ $_ := set $sasl "token_timeout" . }}{{ end -}}
{{- if $s.tokenEndpointCASecret }}{{ $_ := set $sasl "token_endpoint_ca_file" (printf "%s/ca.crt" (include "kproxy.tokenEndpointCADir" .)) }}{{ end -}}
{{- else -}}
{{- $_ := set $sasl "username" $s.username -}}
{{- $_ := set $sasl "password_file" (printf "%s/%s" (include "kproxy.upstreamSASLDir" .) $s.passwordSecret.key) -}}
{{- end -}}
{{- $_ := set $up "sasl" $sasl -}}
{{- end -}}
{{- toYaml $up -}}
{{- end -}}

{{/* listeners: ports, TLS, SASL, PROXY protocol and SNI for clients. */}}
{{- define "kproxy.listenersConfig" -}}
{{- $l := .Values.listeners -}}
{{- $ln := dict "bind_host" (include "kproxy.bindHost" .) "advertised_host" (include "kproxy.advertisedHost" .) -}}
{{- /* With virtual clusters each serves its own ports; the top level only lends them settings. */ -}}
{{- $served := empty .Values.virtualClusters -}}
{{- if $served -}}
{{- $_ := set $ln "bootstrap_port" .Values.ports.bootstrap -}}
{{- $_ := set $ln "broker_port_base" .Values.ports.brokerPortBase -}}
{{- end -}}
{{- if $l.tls.enabled -}}
{{- $_ := set $ln "tls" (include "kproxy.listenerTLS" (dict "dir" (include "kproxy.listenerTLSDir" .) "tls" $l.tls) | fromYaml) -}}
{{- end -}}
{{- if $l.sasl.enabled -}}
{{- $sasl := dict "mode" $l.sasl.mode -}}
{{- with $l.sasl.mechanisms }}{{ $_ := set $sasl "mechanisms" . }}{{ end -}}
{{- with $l.sasl.sessionLifetime }}{{ $_ := set $sasl "session_lifetime" . }}{{ end -}}
{{- with $l.sasl.users }}{{ $_ := set $sasl "users" . }}{{ end -}}
{{- with $l.sasl.oauthbearer }}{{ $_ := set $sasl "oauthbearer" . }}{{ end -}}
{{- $_ := set $ln "sasl" $sasl -}}
{{- end -}}
{{- with $l.proxyProtocol -}}
{{- if and .mode (ne .mode "off") -}}
{{- $_ := set $ln "proxy_protocol" (dict "mode" .mode "trusted_cidrs" (default list .trustedCidrs)) -}}
{{- end -}}
{{- end -}}
{{- if $served }}{{ with $l.brokers }}{{ $_ := set $ln "brokers" . }}{{ end }}{{ end -}}
{{- if not $l.portPerBroker }}{{ $_ := set $ln "port_per_broker" false }}{{ end -}}
{{- if and $served $l.sni.enabled -}}
{{- $sni := dict "port" $l.sni.port "bootstrap_host" $l.sni.bootstrapHost "broker_host_pattern" $l.sni.brokerHostPattern -}}
{{- with $l.sni.advertisedPort }}{{ $_ := set $sni "advertised_port" . }}{{ end -}}
{{- $_ := set $sni "tls" (include "kproxy.listenerTLS" (dict "dir" (include "kproxy.sniTLSDir" .) "tls" $l.sni) | fromYaml) -}}
{{- $certs := list -}}
{{- range $l.sni.certificateSecrets -}}
{{- $dir := printf "%s/%s" (include "kproxy.sniCertificatesDir" $) . -}}
{{- $certs = append $certs (dict "cert_file" (printf "%s/tls.crt" $dir) "key_file" (printf "%s/tls.key" $dir)) -}}
{{- end -}}
{{- with $certs }}{{ $_ := set $sni "certificates" . }}{{ end -}}
{{- $_ := set $ln "sni" $sni -}}
{{- end -}}
{{- toYaml $ln -}}
{{- end -}}

{{/* A listener's tls section from a kubernetes.io/tls Secret mounted at dir. */}}
{{- define "kproxy.listenerTLS" -}}
{{- $t := .tls -}}
{{- $tls := dict "cert_file" (printf "%s/tls.crt" .dir) "key_file" (printf "%s/tls.key" .dir) "client_auth" $t.clientAuth -}}
{{- if ne $t.clientAuth "none" }}{{ $_ := set $tls "client_ca_file" (printf "%s/ca.crt" .dir) }}{{ end -}}
{{- with $t.principalFrom }}{{ $_ := set $tls "principal_from" . }}{{ end -}}
{{- toYaml $tls -}}
{{- end -}}

{{/* kproxy.config: the whole kproxy.yaml, the restart keys plus what kproxy reloads. */}}
{{- define "kproxy.config" -}}
{{- $cfg := include "kproxy.baseConfig" . | fromYaml -}}
{{- with .Values.policy }}{{ $_ := set $cfg "policy" . }}{{ end -}}
{{- if hasKey .Values.audit "log_allowed" -}}
{{- $audit := default dict (get $cfg "audit") -}}
{{- $_ := set $audit "log_allowed" .Values.audit.log_allowed -}}
{{- $_ := set $cfg "audit" $audit -}}
{{- end -}}
{{- with .Values.extraConfig.policy }}{{ $_ := set $cfg "policy" (mergeOverwrite (default dict (get $cfg "policy")) (deepCopy .)) }}{{ end -}}
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
  {{- range include "kproxy.kafkaPorts" . | fromJsonArray }}
  - {name: {{ .name }}, containerPort: {{ .port }}, protocol: TCP}
  {{- end }}
  {{- if eq .Values.mode "gateway" }}
  - {name: admin, containerPort: {{ .Values.ports.admin }}, protocol: TCP}
  {{- end }}
env:
  # kproxy sets its Go memory limit to 90% of this (KPROXY_MEMORY_LIMIT_RATIO):
  # the collector works harder before the kernel's OOM killer would act.
  - name: KPROXY_MEMORY_LIMIT
    valueFrom:
      resourceFieldRef: {resource: limits.memory}
  {{- include "kproxy.awsCredentialsEnv" . | nindent 2 }}
  {{- with .Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- if eq .Values.mode "sidecar" }}
startupProbe:
  {{- include "kproxy.probeAction" (list . "/readyz") | nindent 2 }}
  periodSeconds: 1
  failureThreshold: 120
{{- else }}
lifecycle:
  # Endpoints drop a terminating pod only after kubelet, kube-proxy and
  # load balancers have seen it: kproxy keeps serving meanwhile, and the
  # SIGTERM drain starts after.
  preStop:
    sleep: {seconds: {{ .Values.preStopSleepSeconds }}}
{{- end }}
readinessProbe:
  {{- include "kproxy.probeAction" (list . "/readyz") | nindent 2 }}
  {{- toYaml .Values.probes.readiness | nindent 2 }}
livenessProbe:
  {{- include "kproxy.probeAction" (list . "/healthz") | nindent 2 }}
  {{- toYaml .Values.probes.liveness | nindent 2 }}
resources:
  {{- toYaml (eq .Values.mode "sidecar" | ternary .Values.sidecar.resources .Values.resources) | nindent 2 }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  # The whole ConfigMap (or Secret) as a directory (never subPath): kubelet
  # swaps the file on an update and kproxy, polling it, reloads the policy.
  - {name: config, mountPath: {{ include "kproxy.configDir" . }}, readOnly: true}
  {{- range include "kproxy.secretMounts" . | fromJsonArray }}
  - {name: {{ .volume }}, mountPath: {{ .dir }}, readOnly: true}
  {{- end }}
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/*
The Secrets the configuration reads files from, as a JSON list of {volume,
secret, dir, key}: key, when set, is the only key projected.
*/}}
{{- define "kproxy.secretMounts" -}}
{{- $v := .Values -}}
{{- $m := list -}}
{{- if $v.listeners.tls.enabled -}}
{{- $m = append $m (dict "volume" "listener-tls" "secret" $v.listeners.tls.secretName "dir" (include "kproxy.listenerTLSDir" .)) -}}
{{- end -}}
{{- if and $v.listeners.sni.enabled (empty $v.virtualClusters) -}}
{{- $m = append $m (dict "volume" "sni-tls" "secret" $v.listeners.sni.secretName "dir" (include "kproxy.sniTLSDir" .)) -}}
{{- range $i, $name := $v.listeners.sni.certificateSecrets -}}
{{- $m = append $m (dict "volume" (printf "sni-certificate-%d" $i) "secret" $name "dir" (printf "%s/%s" (include "kproxy.sniCertificatesDir" $) $name)) -}}
{{- end -}}
{{- end -}}
{{- if and $v.upstream.tls.enabled $v.upstream.tls.secretName -}}
{{- $m = append $m (dict "volume" "upstream-tls" "secret" $v.upstream.tls.secretName "dir" (include "kproxy.upstreamTLSDir" .)) -}}
{{- end -}}
{{- with $v.upstream.sasl -}}
{{- if and .enabled (eq .mechanism "OAUTHBEARER") -}}
{{- $m = append $m (dict "volume" "upstream-oauth" "secret" .clientSecretSecret.name "dir" (include "kproxy.upstreamOAuthDir" $) "key" .clientSecretSecret.key) -}}
{{- with .tokenEndpointCASecret }}{{ $m = append $m (dict "volume" "token-endpoint-ca" "secret" . "dir" (include "kproxy.tokenEndpointCADir" $)) }}{{ end -}}
{{- else if .enabled -}}
{{- $m = append $m (dict "volume" "upstream-sasl" "secret" .passwordSecret.name "dir" (include "kproxy.upstreamSASLDir" $) "key" .passwordSecret.key) -}}
{{- end -}}
{{- end -}}
{{- with (index $v (include "kproxy.awsCredentialsKey" .)).fileSecret -}}
{{- if .name }}{{ $m = append $m (dict "volume" "aws-credentials" "secret" .name "dir" (include "kproxy.awsCredentialsDir" $) "key" .key) }}{{ end -}}
{{- end -}}
{{- toJson $m -}}
{{- end -}}

{{/*
The values key holding the AWS credentials, which the SDK's chain reads for
encryption's KMS and large_messages' S3 store: awsCredentials, or
kmsCredentials, its deprecated former name, when that alone names a Secret
(kproxy.validate refuses both).
*/}}
{{- define "kproxy.awsCredentialsKey" -}}
{{- if include "kproxy.awsCredentialsNamed" .Values.kmsCredentials -}}kmsCredentials{{- else -}}awsCredentials{{- end -}}
{{- end -}}

{{/* "true" when an awsCredentials (or kmsCredentials) value names a Secret. */}}
{{- define "kproxy.awsCredentialsNamed" -}}
{{- $c := . | default dict -}}
{{- if or (dig "envSecret" "name" "" $c) (dig "fileSecret" "name" "" $c) }}true{{ end -}}
{{- end -}}

{{/*
The AWS SDK's environment variables for awsCredentials: the keys of
envSecret, or where fileSecret is mounted. The session token is optional:
long-lived access keys have none.
*/}}
{{- define "kproxy.awsCredentialsEnv" -}}
{{- $c := index .Values (include "kproxy.awsCredentialsKey" .) -}}
{{- $env := list -}}
{{- with $c.envSecret -}}
{{- if .name -}}
{{- $env = append $env (dict "name" "AWS_ACCESS_KEY_ID" "valueFrom" (dict "secretKeyRef" (dict "name" .name "key" .accessKeyIdKey))) -}}
{{- $env = append $env (dict "name" "AWS_SECRET_ACCESS_KEY" "valueFrom" (dict "secretKeyRef" (dict "name" .name "key" .secretAccessKeyKey))) -}}
{{- with .sessionTokenKey -}}
{{- $env = append $env (dict "name" "AWS_SESSION_TOKEN" "valueFrom" (dict "secretKeyRef" (dict "name" $c.envSecret.name "key" . "optional" true))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- with $c.fileSecret -}}
{{- if .name -}}
{{- $env = append $env (dict "name" "AWS_SHARED_CREDENTIALS_FILE" "value" (printf "%s/%s" (include "kproxy.awsCredentialsDir" $) .key)) -}}
{{- with .profile }}{{ $env = append $env (dict "name" "AWS_PROFILE" "value" .) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if $env }}{{ toYaml $env }}{{ end -}}
{{- end -}}

{{/* The volumes the kproxy container mounts. */}}
{{- define "kproxy.volumes" -}}
- name: config
  {{- if .Values.existingConfigMap }}
  configMap:
    name: {{ .Values.existingConfigMap }}
  {{- else if or .Values.existingSecret .Values.configSecret }}
  secret:
    secretName: {{ default (include "kproxy.fullname" .) .Values.existingSecret }}
  {{- else }}
  configMap:
    name: {{ include "kproxy.fullname" . }}
  {{- end }}
{{- range include "kproxy.secretMounts" . | fromJsonArray }}
- name: {{ .volume }}
  secret:
    secretName: {{ .secret }}
    {{- with .key }}
    items:
      - {key: {{ . }}, path: {{ . }}}
    {{- end }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Service ports: bootstrap and one per broker, the container's numbers. */}}
{{- define "kproxy.servicePorts" -}}
{{- range include "kproxy.kafkaPorts" . | fromJsonArray }}
- {name: {{ .name }}, port: {{ .port }}, targetPort: {{ .name }}, protocol: TCP}
{{- end }}
{{- end -}}
