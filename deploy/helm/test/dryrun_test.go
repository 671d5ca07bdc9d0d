package helmtest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/config"
	"sigs.k8s.io/yaml"
)

// resourcePaths maps "apiVersion Kind" of every kind the chart renders to
// its API path prefix and resource name; namespaced is whether objects of
// it live in the release's namespace.
var resourcePaths = map[string]struct {
	prefix, resource string
	namespaced       bool
}{
	"v1 ConfigMap":                                     {"/api/v1", "configmaps", true},
	"v1 Secret":                                        {"/api/v1", "secrets", true},
	"v1 Service":                                       {"/api/v1", "services", true},
	"v1 Namespace":                                     {"/api/v1", "namespaces", false},
	"apps/v1 Deployment":                               {"/apis/apps/v1", "deployments", true},
	"policy/v1 PodDisruptionBudget":                    {"/apis/policy/v1", "poddisruptionbudgets", true},
	"autoscaling/v2 HorizontalPodAutoscaler":           {"/apis/autoscaling/v2", "horizontalpodautoscalers", true},
	"networking.k8s.io/v1 NetworkPolicy":               {"/apis/networking.k8s.io/v1", "networkpolicies", true},
	"monitoring.coreos.com/v1 ServiceMonitor":          {"/apis/monitoring.coreos.com/v1", "servicemonitors", true},
	"monitoring.coreos.com/v1 PrometheusRule":          {"/apis/monitoring.coreos.com/v1", "prometheusrules", true},
	"apiextensions.k8s.io/v1 CustomResourceDefinition": {"/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", false},
}

// manifest is one rendered object: its YAML and where it is applied.
type manifest struct {
	id   string // Kind/name
	path string
	yaml string
}

// parseManifest reads the type and name of one YAML document.
func parseManifest(doc []byte) (manifest, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return manifest{}, err
	}
	rp, ok := resourcePaths[head.APIVersion+" "+head.Kind]
	if !ok {
		return manifest{}, fmt.Errorf("no API path known for %s %s: add it to resourcePaths", head.APIVersion, head.Kind)
	}
	path := rp.prefix
	if rp.namespaced {
		path += "/namespaces/" + namespace
	}
	return manifest{id: head.Kind + "/" + head.Metadata.Name, path: path + "/" + rp.resource + "/" + head.Metadata.Name, yaml: string(doc)}, nil
}

// renderManifests renders values (over upstreamValues) into manifests,
// in a stable order.
func renderManifests(t *testing.T, values string) []manifest {
	t.Helper()
	files, err := renderValues(t, upstreamValues, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []manifest
	for _, name := range names {
		for _, doc := range splitDocuments(files[name]) {
			m, err := parseManifest(doc)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestKubeAPIServerDryRun applies every values case's render to a real
// kube-apiserver by server-side apply with dryRun=All, so the API server's
// own validation, defaulting and admission judge the manifests (strict
// decoding into k8s.io/api types checks field names and types only), and
// shows it refusing values whose render decodes cleanly.
func TestKubeAPIServerDryRun(t *testing.T) {
	dir := os.Getenv(kubeAPIDirEnv)
	if dir == "" {
		t.Skipf("%s is not set: build etcd and kube-apiserver with test/kubeapi/build.sh DIR and point %s at DIR (.ci/run does)", kubeAPIDirEnv, kubeAPIDirEnv)
	}
	api := startKubeAPI(t, dir)
	ctx := t.Context()
	installCRDs(ctx, t, api, filepath.Join(dir, "crds"))
	ns := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", namespace)
	if status, msg, _ := api.apply(ctx, "/api/v1/namespaces/"+namespace, ns, false); status >= 300 {
		t.Fatalf("create namespace %s: %d %s", namespace, status, msg)
	}

	t.Run("cases", func(t *testing.T) {
		for _, tc := range chartCases(t) {
			t.Run(tc.name, func(t *testing.T) {
				if tc.listenerKey != "" && !slices.Contains(yamlKeys(reflect.TypeFor[config.Listeners]()), tc.listenerKey) {
					t.Skipf("this kproxy's configuration has no listeners.%s", tc.listenerKey)
				}
				for _, m := range renderManifests(t, tc.values) {
					status, msg, warnings := api.apply(ctx, m.path, m.yaml, true)
					if status != http.StatusOK && status != http.StatusCreated {
						t.Errorf("%s: the API server refused it: %d %s\n%s", m.id, status, msg, m.yaml)
					}
					if len(warnings) > 0 {
						t.Errorf("%s: the API server warned: %s", m.id, strings.Join(warnings, "; "))
					}
				}
			})
		}
	})

	// Values whose render passes the values schema and strict decoding,
	// but which no cluster would accept.
	for _, bad := range []struct {
		name, values, object, want string
	}{
		{"memory request above its limit", "resources: {requests: {cpu: 100m, memory: 512Mi}, limits: {memory: 256Mi}}",
			"Deployment/" + fullname, "must be less than or equal to memory limit"},
		{"pod label value with a space", `podLabels: {team: "platform team"}`,
			"Deployment/" + fullname, "a valid label must be an empty string or consist of alphanumeric characters"},
	} {
		t.Run("rejects/"+bad.name, func(t *testing.T) {
			render(t, upstreamValues, bad.values) // strict decoding: passes
			ms := renderManifests(t, bad.values)
			i := slices.IndexFunc(ms, func(m manifest) bool { return m.id == bad.object })
			if i < 0 {
				t.Fatalf("no %s rendered", bad.object)
			}
			status, msg, _ := api.apply(ctx, ms[i].path, ms[i].yaml, true)
			if status != http.StatusUnprocessableEntity || !strings.Contains(msg, bad.want) {
				t.Errorf("%s: %d %q, want 422 Invalid saying %q", bad.object, status, msg, bad.want)
			}
		})
	}
}

// installCRDs creates the CRDs in dir (the chart's ServiceMonitor and
// PrometheusRule kinds) and waits until the API server serves them.
func installCRDs(ctx context.Context, t *testing.T, api *kubeAPI, dir string) {
	t.Helper()
	for _, file := range []string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("prometheus-operator CRD: %v", err)
		}
		m, err := parseManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if status, msg, _ := api.apply(ctx, m.path, m.yaml, false); status >= 300 {
			t.Fatalf("install %s: %d %s", m.id, status, msg)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, r := range []string{"servicemonitors", "prometheusrules"} {
		for {
			status, _, _ := api.do(ctx, http.MethodGet, "/apis/monitoring.coreos.com/v1/namespaces/"+namespace+"/"+r, "", nil)
			if status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the API server does not serve %s 30 s after its CRD was created: %d", r, status)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
