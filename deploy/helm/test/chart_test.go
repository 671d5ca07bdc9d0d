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
		})
	}
}

// loadRenderedConfig writes the ConfigMap's kproxy.yaml to a file, runs
// `kproxy validate` on it and loads it with internal/config.
func loadRenderedConfig(t *testing.T, bin string, objs *objects) *config.Config {
	t.Helper()
	cm, ok := objs.configMaps[fullname]
	if !ok {
		t.Fatalf("no ConfigMap %s in %v", fullname, objs.kinds)
	}
	text, ok := cm.Data["kproxy.yaml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no kproxy.yaml: %v", fullname, cm.Data)
	}
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
