package helmtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// TestLint runs `helm lint`'s rules through the SDK (Chart.yaml, values
// against values.schema.json, every template rendered and parsed) for
// every case of the matrix: no warning, no error.
func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range chartCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir, layeredValues(t, upstreamValues, tc.values), namespace, kv)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("lint: %v", m)
				} else {
					t.Logf("lint: %v", m)
				}
			}
		})
	}
}

// TestValuesRejected: values the schema or the chart's own checks refuse,
// each with a message naming the key.
func TestValuesRejected(t *testing.T) {
	for _, tc := range []struct{ name, values, want string }{
		{"misspelt top-level key", "replicaCont: 3", "replicaCont"},
		{"misspelt nested key", "loadBalancer: {enable: true}", "enable"},
		{"port out of range", "ports: {bootstrap: 70000}", "bootstrap"},
		{"unknown mode", "mode: mesh", "mode"},
		{"unknown limits key", "limits: {max_conections: 10}", "max_conections"},
		{"no upstream", "upstream: {bootstrapServers: []}", "upstream.bootstrapServers"},
		{"broker port beyond 65535", "brokers: {nodeIds: [60000]}", "brokers.nodeIds"},
		{"sasl without its secret", "upstream: {sasl: {enabled: true, username: u}}", "upstream.sasl.passwordSecret.name"},
		{"listener tls without its secret", "listeners: {tls: {enabled: true}}", "listeners.tls.secretName"},
		{"oauthbearer without its secret", "upstream: {sasl: {enabled: true, mechanism: OAUTHBEARER, clientId: c}}", "upstream.sasl.clientSecretSecret.name"},
		{"sni without its secret", "listeners: {sni: {enabled: true}}", "listeners.sni.secretName"},
		{"two existing configurations", "existingConfigMap: a\nexistingSecret: b", "existingConfigMap"},
		{"unknown tracing key", "tracing: {enable: true}", "enable"},
		{"unknown extraConfig key", "extraConfig: {limits: {max_conections: 1}}", "max_conections"},
		{"node count zero", "brokers: {nodeIds: 0}", "nodeIds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderValues(t, upstreamValues, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestStrictDecodingRejectsUnknownFields shows the decoding the matrix
// relies on fails on a misspelt field (and passes the same object spelt
// right), so a template typo cannot hide behind a permissive decoder.
func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	const good = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 2\n"
	var dep appsv1.Deployment
	if err := decodeStrict([]byte(good), &dep); err != nil || *dep.Spec.Replicas != 2 {
		t.Fatalf("decoding a valid Deployment: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(good, "replicas", "replica", 1),
		good + "  template: {spec: {containers: [{name: a, readinessProbe: {httpGet: {path: /readyz, prot: 9644}}}]}}\n",
		good + "  replicas: 3\n",
	} {
		if err := decodeStrict([]byte(bad), &appsv1.Deployment{}); err == nil {
			t.Errorf("strict decoding accepted\n%s", bad)
		}
	}
}

// TestSchemaMatchesConfigKeys: the schema's limits, audit and log keys are
// exactly kproxy's (written as in kproxy.yaml), so the schema neither
// rejects a real key nor lets a misspelt one through to a crash-looping
// pod.
func TestSchemaMatchesConfigKeys(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for key, typ := range map[string]reflect.Type{
		"limits": reflect.TypeFor[config.Limits](),
		"audit":  reflect.TypeFor[policyconfig.Audit](),
		"log":    reflect.TypeFor[config.Log](),
	} {
		var got []string
		for k := range schema.Properties[key].Properties {
			got = append(got, k)
		}
		slices.Sort(got)
		want := yamlKeys(typ)
		if !slices.Equal(got, want) {
			t.Errorf("values.schema.json %s keys %v, kproxy's are %v", key, got, want)
		}
	}
}

// yamlKeys lists the YAML keys of a config struct, inline fields flattened.
func yamlKeys(typ reflect.Type) []string {
	var keys []string
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			keys = append(keys, yamlKeys(f.Type)...)
			continue
		}
		keys = append(keys, name)
	}
	slices.Sort(keys)
	return keys
}

// TestExistingConfiguration: with existingConfigMap or existingSecret the
// chart renders no configuration of its own and mounts the named object.
func TestExistingConfiguration(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"existingConfigMap: my-kproxy", "ConfigMap"},
		{"existingSecret: my-kproxy", "Secret"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			objs := render(t, upstreamValues, tc.values)
			if len(objs.configMaps)+len(objs.secrets) != 0 {
				t.Errorf("rendered a configuration beside %s: %v", tc.values, objs.kinds)
			}
			spec := mustGet(t, objs.deployments, fullname).Spec.Template.Spec
			v := volume(t, spec, "config")
			if got := configSourceName(v, tc.want == "Secret"); got != "my-kproxy" {
				t.Errorf("config volume %+v, want the %s my-kproxy", v.VolumeSource, tc.want)
			}
		})
	}
}
