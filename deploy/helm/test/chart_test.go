package helmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	corev1 "k8s.io/api/core/v1"
)

const fullname = releaseName + "-kproxy"

// upstreamValues is the cluster every case fronts.
const upstreamValues = `
upstream:
  bootstrapServers: ["kafka-0.kafka:9092", "kafka-1.kafka:9092", "kafka-2.kafka:9092"]
`

// chartCase is one set of values and what its render must contain.
type chartCase struct {
	name   string
	values string
	mode   string
	// replicas: the Deployment's (gateway), 0 when the HPA owns it.
	replicas int32
	nodeIDs  []int32
	lb, hpa  bool
	monitor  bool
	// secrets: volume name -> Secret name the pod must mount.
	secrets map[string]string
	policy  bool
	// configSecret: kproxy.yaml is rendered into a Secret, not a ConfigMap.
	configSecret bool
	// check, when set, checks what else the case's values should render.
	check func(t *testing.T, objs *objects, cfg *config.Config)
	// listenerKey, when set, is a listeners key the case needs kproxy's
	// configuration to know; the case is skipped on a kproxy without it.
	listenerKey string
}

func chartCases(t *testing.T) []chartCase {
	cred, err := auth.HashPassword(auth.ScramSHA512, "alice-secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	secure := fmt.Sprintf(`
listeners:
  tls: {enabled: true, secretName: kproxy-tls, clientAuth: require, principalFrom: cn}
  sasl:
    enabled: true
    users: [{name: alice, credentials: [%q]}]
upstream:
  tls: {enabled: true, secretName: kafka-ca, clientCertificate: true, serverName: kafka.internal}
  sasl:
    enabled: true
    mechanism: SCRAM-SHA-512
    username: kproxy
    passwordSecret: {name: kafka-login, key: pw}
policy:
  default: deny
  rules:
    - {name: alice-reads, principals: ["User:alice"], allow: [Read, Describe], topics: ["orders"], groups: ["*"]}
audit: {log_allowed: true}
`, cred)
	return []chartCase{
		{name: "gateway-1-replica", mode: "gateway", replicas: 1, nodeIDs: []int32{0, 1, 2},
			values: "replicaCount: 1\n"},
		{name: "gateway-3-replicas-lb", mode: "gateway", replicas: 3, nodeIDs: []int32{1, 2, 3, 1001}, lb: true,
			values: `
replicaCount: 3
brokers: {nodeIds: [1, 2, 3, 1001]}
advertisedHost: kafka.example.com
loadBalancer: {enabled: true, loadBalancerSourceRanges: ["203.0.113.0/24"]}
`},
		{name: "gateway-hpa-servicemonitor", mode: "gateway", nodeIDs: []int32{0, 1, 2}, hpa: true, monitor: true,
			values: `
autoscaling: {enabled: true, minReplicas: 3, maxReplicas: 9}
serviceMonitor: {enabled: true, labels: {release: prometheus}}
`},
		{name: "gateway-tls-sasl-policy", mode: "gateway", replicas: 2, nodeIDs: []int32{0, 1, 2}, policy: true,
			secrets: map[string]string{"listener-tls": "kproxy-tls", "upstream-tls": "kafka-ca", "upstream-sasl": "kafka-login"},
			values:  secure},
		{name: "sidecar-native", mode: "sidecar", nodeIDs: []int32{0, 1, 2}, policy: true,
			secrets: map[string]string{"upstream-tls": "kafka-ca", "upstream-sasl": "kafka-login"},
			values: `
mode: sidecar
upstream:
  tls: {enabled: true, secretName: kafka-ca}
  sasl: {enabled: true, username: app, passwordSecret: {name: kafka-login, key: password}}
policy:
  default: allow
  governance: [{name: durable, produce: {required_acks: all}}]
`},
		{name: "gateway-lb-proxy-protocol", mode: "gateway", replicas: 3, nodeIDs: []int32{0, 1, 2}, lb: true,
			listenerKey: "proxy_protocol",
			values: `
replicaCount: 3
advertisedHost: kafka.example.com
loadBalancer: {enabled: true, externalTrafficPolicy: Local}
listeners:
  proxyProtocol: {mode: required, trustedCidrs: ["10.0.0.0/8"]}
`},
		{name: "sidecar-plain-container", mode: "sidecar", nodeIDs: []int32{0, 1, 2},
			values: "mode: sidecar\nsidecar: {native: false}\n"},
		{name: "gateway-sni", mode: "gateway", replicas: 2, nodeIDs: []int32{0, 1, 2}, lb: true,
			secrets: map[string]string{"sni-tls": "kafka-sni-tls", "sni-certificate-0": "kafka-other-tls"},
			values: `
advertisedHost: kafka.example.com
loadBalancer: {enabled: true}
listeners:
  portPerBroker: false
  sni:
    enabled: true
    port: 9093
    bootstrapHost: kafka.example.com
    brokerHostPattern: broker-$(node_id).kafka.example.com
    secretName: kafka-sni-tls
    certificateSecrets: [kafka-other-tls]
`},
		{name: "gateway-oauthbearer-both-ways", mode: "gateway", replicas: 2, nodeIDs: []int32{0, 1, 2},
			secrets: map[string]string{"upstream-tls": "kafka-ca", "upstream-oauth": "kproxy-oauth", "token-endpoint-ca": "idp-ca"},
			values: `
listeners:
  sasl:
    enabled: true
    mechanisms: [OAUTHBEARER]
    oauthbearer: {jwks_url: "https://idp.example.com/keys", issuer: "https://idp.example.com", audience: kafka}
upstream:
  tls: {enabled: true, secretName: kafka-ca}
  sasl:
    enabled: true
    mechanism: OAUTHBEARER
    tokenEndpoint: https://idp.example.com/token
    clientId: kproxy
    clientSecretSecret: {name: kproxy-oauth, key: secret}
    scope: kafka
    tokenEndpointCASecret: idp-ca
`,
			check: func(t *testing.T, _ *objects, cfg *config.Config) {
				if cfg.Listeners.SASL == nil || cfg.Listeners.SASL.OAuthBearer == nil || cfg.Listeners.SASL.OAuthBearer.Issuer != "https://idp.example.com" {
					t.Errorf("listeners.sasl %+v: want OAUTHBEARER verified against the issuer", cfg.Listeners.SASL)
				}
				if s := cfg.Upstream.SASL; s == nil || s.Mechanism != "OAUTHBEARER" || s.ClientID != "kproxy" || s.Scope != "kafka" {
					t.Errorf("upstream.sasl %+v: want kproxy's OAUTHBEARER client login", cfg.Upstream.SASL)
				}
			}},
		{name: "gateway-two-virtual-clusters", mode: "gateway", replicas: 2, nodeIDs: []int32{0, 1, 2},
			values: `
virtualClusters:
  - name: team-a
    topic_prefix: "a."
    group_prefix: "a."
    transactional_id_prefix: "a."
    listeners: {bootstrap_port: 19092, broker_port_base: 19100}
  - name: team-b
    topic_prefix: "b."
    group_prefix: "b."
    transactional_id_prefix: "b."
    listeners: {bootstrap_port: 29092, broker_port_base: 29100}
    policy: {default: deny}
`,
			check: func(t *testing.T, _ *objects, cfg *config.Config) {
				if len(cfg.VirtualClusters) != 2 || cfg.VirtualClusters[1].Name != "team-b" {
					t.Errorf("virtual clusters %+v, want team-a and team-b", cfg.VirtualClusters)
				}
			}},
		{name: "gateway-tracing-metrics-node-count", mode: "gateway", replicas: 2, nodeIDs: []int32{0, 1, 2, 3},
			values: `
brokers: {nodeIds: 4}
tracing: {enabled: true, endpoint: "http://otel-collector.observability:4318", ratio: 0.1}
metrics: {principal_limit: 100}
admin: {pprof: true}
upstream: {metadataRefresh: 1m, reconnectBackoff: 200ms, reconnectBackoffMax: 5s}
`,
			check: func(t *testing.T, _ *objects, cfg *config.Config) {
				if !cfg.Tracing.Enabled || cfg.Tracing.Endpoint != "http://otel-collector.observability:4318" {
					t.Errorf("tracing %+v, want enabled towards the collector", cfg.Tracing)
				}
				if cfg.Metrics.PrincipalLimit != 100 || !cfg.Admin.Pprof {
					t.Errorf("metrics %+v admin %+v, want principal_limit 100 and pprof", cfg.Metrics, cfg.Admin)
				}
			}},
		{name: "gateway-config-secret-escape-hatches", mode: "gateway", replicas: 2, nodeIDs: []int32{0, 1, 2},
			configSecret: true, policy: true,
			values: `
configSecret: true
extraConfig:
  limits: {max_connections: 5000}
  policy: {default: allow}
extraEnv: [{name: TZ, value: UTC}]
extraVolumes: [{name: extra-ca, secret: {secretName: corp-ca}}]
extraVolumeMounts: [{name: extra-ca, mountPath: /etc/kproxy/extra-ca, readOnly: true}]
`,
			check: func(t *testing.T, objs *objects, cfg *config.Config) {
				if cfg.Limits.MaxConnections != 5000 {
					t.Errorf("limits.max_connections %d, want extraConfig's 5000", cfg.Limits.MaxConnections)
				}
				if len(objs.configMaps) != 0 {
					t.Errorf("configSecret rendered a ConfigMap too: %v", objs.kinds)
				}
				spec := mustGet(t, objs.deployments, fullname).Spec.Template.Spec
				kp := spec.Containers[0]
				if m := mountOf(t, kp, "/etc/kproxy/extra-ca/ca.crt"); volume(t, spec, m.Name).Secret.SecretName != "corp-ca" {
					t.Errorf("extra volume mount %+v is not the Secret corp-ca", m)
				}
				if !slices.ContainsFunc(kp.Env, func(e corev1.EnvVar) bool { return e.Name == "TZ" && e.Value == "UTC" }) {
					t.Errorf("env %v lacks extraEnv TZ", kp.Env)
				}
			}},
	}
}

// TestChartMatrix renders each case and checks every object against the
// configuration kproxy itself loads from the rendered ConfigMap.
func TestChartMatrix(t *testing.T) {
	bin := testkit.BuildKproxy(t)
	for _, tc := range chartCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			if tc.listenerKey != "" && !slices.Contains(yamlKeys(reflect.TypeFor[config.Listeners]()), tc.listenerKey) {
				t.Skipf("this kproxy's configuration has no listeners.%s", tc.listenerKey)
			}
			objs := render(t, upstreamValues, tc.values)
			t.Logf("rendered: %s", strings.Join(objs.kinds, " "))
			cfg := loadRenderedConfig(t, bin, objs)
			if tc.mode == "gateway" {
				checkGateway(t, tc, objs, cfg)
			} else {
				checkSidecar(t, tc, objs, cfg)
			}
			if tc.check != nil {
				tc.check(t, objs, cfg)
			}
		})
	}
}

// loadRenderedConfig writes the rendered kproxy.yaml to a file, runs
// `kproxy validate` on it and loads it with internal/config.
func loadRenderedConfig(t *testing.T, bin string, objs *objects) *config.Config {
	t.Helper()
	text := objs.kproxyYAML(t)
	path := filepath.Join(t.TempDir(), "kproxy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// The rendered paths are the pod's mounts, absent here.
	out, err := exec.Command(bin, "validate", "--skip-file-checks", "--config", path).CombinedOutput()
	if err != nil {
		t.Fatalf("kproxy validate on the rendered config: %v\n%s\n---\n%s", err, out, text)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("load rendered config: %v", err)
	}
	return cfg
}
