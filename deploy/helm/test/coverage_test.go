package helmtest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// expression is how the chart's values set one configuration key.
type expression struct {
	// values set the key when rendered over upstreamValues; "" when the
	// chart writes the key from its defaults.
	values string
	// notOffered, when set, says why the chart offers a key another way
	// (and values is empty).
	notOffered string
}

// chartShapedKeys are the keys of kproxy's configuration the chart writes
// from its own values (not passed through): every leaf of admin, upstream
// and listeners outside passthroughSections.
var chartShapedKeys = map[string]expression{
	"admin.listen": {},
	"admin.pprof":  {values: "admin: {pprof: true}"},

	"upstream.bootstrap_servers":             {},
	"upstream.dial_timeout":                  {values: "upstream: {dialTimeout: 5s}"},
	"upstream.metadata_refresh":              {values: "upstream: {metadataRefresh: 1m}"},
	"upstream.reconnect_backoff":             {values: "upstream: {reconnectBackoff: 100ms}"},
	"upstream.reconnect_backoff_max":         {values: "upstream: {reconnectBackoffMax: 5s}"},
	"upstream.tls.ca_file":                   {values: "upstream: {tls: {enabled: true, secretName: ca}}"},
	"upstream.tls.cert_file":                 {values: "upstream: {tls: {enabled: true, clientCertificate: true}}"},
	"upstream.tls.key_file":                  {values: "upstream: {tls: {enabled: true, clientCertificate: true}}"},
	"upstream.tls.server_name":               {values: "upstream: {tls: {enabled: true, serverName: kafka}}"},
	"upstream.tls.insecure_skip_verify":      {values: "upstream: {tls: {enabled: true, insecureSkipVerify: true}}"},
	"upstream.sasl.mechanism":                {values: upstreamSCRAM},
	"upstream.sasl.username":                 {values: upstreamSCRAM},
	"upstream.sasl.password_file":            {values: upstreamSCRAM},
	"upstream.sasl.password":                 {notOffered: "a password in values would be in the ConfigMap: passwordSecret mounts it as password_file"},
	"upstream.sasl.password_env":             {notOffered: "passwordSecret is the Secret; extraEnv with extraConfig can still say password_env"},
	"upstream.sasl.token_endpoint":           {values: upstreamOAuth},
	"upstream.sasl.client_id":                {values: upstreamOAuth},
	"upstream.sasl.client_secret_file":       {values: upstreamOAuth},
	"upstream.sasl.scope":                    {values: upstreamOAuth},
	"upstream.sasl.token_timeout":            {values: upstreamOAuth},
	"upstream.sasl.token_endpoint_ca_file":   {values: upstreamOAuth},
	"upstream.sasl.client_secret":            {notOffered: "a secret in values would be in the ConfigMap: clientSecretSecret mounts it as client_secret_file"},
	"upstream.sasl.client_secret_env":        {notOffered: "clientSecretSecret is the Secret; extraEnv with extraConfig can still say client_secret_env"},
	"listeners.advertised_host":              {},
	"listeners.bind_host":                    {},
	"listeners.bootstrap_port":               {},
	"listeners.broker_port_base":             {},
	"listeners.port_per_broker":              {values: "listeners: {portPerBroker: false}"},
	"listeners.proxy_protocol.mode":          {values: "listeners: {proxyProtocol: {mode: optional, trustedCidrs: [10.0.0.0/8]}}"},
	"listeners.proxy_protocol.trusted_cidrs": {values: "listeners: {proxyProtocol: {mode: optional, trustedCidrs: [10.0.0.0/8]}}"},
	"listeners.sasl.mode":                    {values: "listeners: {sasl: {enabled: true}}"},
	"listeners.sasl.mechanisms":              {values: "listeners: {sasl: {enabled: true, mechanisms: [SCRAM-SHA-256]}}"},
	"listeners.sasl.session_lifetime":        {values: "listeners: {sasl: {enabled: true, sessionLifetime: 1h}}"},
	"listeners.sasl.users":                   {values: "listeners: {sasl: {enabled: true, users: [{name: a, credentials: [c]}]}}"},
	"listeners.tls.cert_file":                {values: listenerTLS},
	"listeners.tls.key_file":                 {values: listenerTLS},
	"listeners.tls.client_auth":              {values: listenerTLS},
	"listeners.tls.client_ca_file":           {values: listenerTLS},
	"listeners.tls.principal_from":           {values: listenerTLS},
	"listeners.sni.port":                     {values: sniListener},
	"listeners.sni.advertised_port":          {values: sniListener},
	"listeners.sni.bootstrap_host":           {values: sniListener},
	"listeners.sni.broker_host_pattern":      {values: sniListener},
	"listeners.sni.certificates":             {values: sniListener},
	"listeners.sni.tls.cert_file":            {values: sniListener},
	"listeners.sni.tls.key_file":             {values: sniListener},
	"listeners.sni.tls.client_auth":          {values: sniListener},
	"listeners.sni.tls.client_ca_file":       {values: sniListener},
	"listeners.sni.tls.principal_from":       {values: sniListener},
	"listeners.sni.bind_host":                {notOffered: "the SNI listener binds listeners.bind_host, which the chart sets for its mode"},
}

const (
	upstreamSCRAM = "upstream: {sasl: {enabled: true, username: u, passwordSecret: {name: s}}}"
	upstreamOAuth = `upstream: {sasl: {enabled: true, mechanism: OAUTHBEARER, tokenEndpoint: "https://idp/token", clientId: c,
  clientSecretSecret: {name: s}, scope: kafka, tokenTimeout: 5s, tokenEndpointCASecret: ca}}`
	listenerTLS = "listeners: {tls: {enabled: true, secretName: t, clientAuth: require, principalFrom: cn}}"
	sniListener = `listeners: {sni: {enabled: true, port: 9093, advertisedPort: 443, bootstrapHost: k, brokerHostPattern: "b-$(node_id)",
  secretName: t, clientAuth: require, principalFrom: cn, certificateSecrets: [t2]}}`
)

// TestValuesExpressEveryConfigKey: every key of kproxy's configuration
// schema is a passthrough section of the values (its schema kproxy's own)
// or a chart-shaped key whose values render it, so a key kproxy gains
// fails here until the chart can say it.
func TestValuesExpressEveryConfigKey(t *testing.T) {
	config := readJSON(t, configSchemaPath)
	defs, _ := config["$defs"].(map[string]any)
	passthrough := map[string]bool{}
	for valuesKey, configKey := range passthroughSections {
		if valuesKey != "extraConfig" { // the escape hatch expresses nothing by name
			passthrough[configKey] = true
		}
	}
	var shaped []string
	var walk func(key string, node map[string]any)
	walk = func(key string, node map[string]any) {
		node = deref(node, defs)
		props, _ := node["properties"].(map[string]any)
		if passthrough[key] || (len(props) == 0 && key != "") {
			if !passthrough[key] {
				shaped = append(shaped, key)
			}
			return
		}
		for k, child := range props {
			sub := k
			if key != "" {
				sub = key + "." + k
			}
			walk(sub, child.(map[string]any))
		}
	}
	walk("", config)
	slices.Sort(shaped)
	if want := slices.Sorted(maps.Keys(chartShapedKeys)); !slices.Equal(shaped, want) {
		t.Fatalf("configuration keys the chart must shape from its values:\n%v\nchartShapedKeys lists:\n%v", shaped, want)
	}

	for key, e := range chartShapedKeys {
		if e.notOffered != "" {
			continue
		}
		t.Run(key, func(t *testing.T) {
			objs := render(t, upstreamValues, e.values)
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(objs.kproxyYAML(t)), &cfg); err != nil {
				t.Fatal(err)
			}
			if !hasPath(cfg, key) {
				t.Errorf("values %q render no %s", e.values, key)
			}
		})
	}
}

// hasPath reports whether the dotted key is set in a decoded YAML tree.
func hasPath(tree map[string]any, key string) bool {
	var node any = tree
	for part := range strings.SplitSeq(key, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			return false
		}
		if node, ok = m[part]; !ok {
			return false
		}
	}
	return true
}
