package helmtest

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, relative to this package.
var chartDir = filepath.Join("..", "kproxy")

// Release names the render uses.
const (
	releaseName = "edge"
	namespace   = "kafka"
)

// kubeVersion is the cluster the render claims: native sidecars need 1.29.
const kubeVersion = "v1.31.0"

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart %s: %v", chartDir, err)
	}
	return c
}

// renderValues renders the chart with layers of values (YAML, over
// values.yaml, later layers winning as with repeated `helm -f`) as `helm
// template` would, values schema included, and returns each manifest
// file's text by template path (NOTES.txt and partials left out).
func renderValues(t testing.TB, layers ...string) (map[string]string, error) {
	t.Helper()
	return renderChartValues(t, loadChart(t), layers...)
}

// renderChartValues is renderValues for the chart c.
func renderChartValues(t testing.TB, c *chart.Chart, layers ...string) (map[string]string, error) {
	t.Helper()
	vals := layeredValues(t, layers...)
	caps := chartutil.DefaultCapabilities.Copy()
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	caps.KubeVersion = *kv
	rv, err := chartutil.ToRenderValues(c, vals,
		chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, text := range files {
		if strings.HasSuffix(name, "NOTES.txt") || strings.TrimSpace(text) == "" {
			continue
		}
		out[name] = text
	}
	return out, nil
}

// layeredValues merges YAML layers of values, later layers winning.
func layeredValues(t testing.TB, layers ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, layer := range layers {
		v, err := chartutil.ReadValues([]byte(layer))
		if err != nil {
			t.Fatalf("values: %v\n%s", err, layer)
		}
		vals = chartutil.CoalesceTables(v.AsMap(), vals)
	}
	return vals
}

// objects are the decoded objects of one render.
type objects struct {
	configMaps      map[string]*corev1.ConfigMap
	secrets         map[string]*corev1.Secret
	deployments     map[string]*appsv1.Deployment
	services        map[string]*corev1.Service
	pdbs            map[string]*policyv1.PodDisruptionBudget
	hpas            map[string]*autoscalingv2.HorizontalPodAutoscaler
	serviceMonitors map[string]*monitoringv1.ServiceMonitor
	prometheusRules map[string]*monitoringv1.PrometheusRule
	networkPolicies map[string]*networkingv1.NetworkPolicy
	kinds           []string // "Kind/name" of every object, sorted
}

// render renders values and decodes every object strictly into its
// Kubernetes type: a field the type does not have (a misspelt key) or a
// kind the chart should not produce fails the test.
func render(t testing.TB, layers ...string) *objects {
	t.Helper()
	return renderChart(t, loadChart(t), layers...)
}

// renderChart is render for the chart c.
func renderChart(t testing.TB, c *chart.Chart, layers ...string) *objects {
	t.Helper()
	files, err := renderChartValues(t, c, layers...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs := &objects{
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}, deployments: map[string]*appsv1.Deployment{},
		services: map[string]*corev1.Service{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, serviceMonitors: map[string]*monitoringv1.ServiceMonitor{},
		prometheusRules: map[string]*monitoringv1.PrometheusRule{}, networkPolicies: map[string]*networkingv1.NetworkPolicy{},
	}
	for name, text := range files {
		for i, doc := range splitDocuments(text) {
			if err := objs.add(doc); err != nil {
				t.Fatalf("%s document %d: %v\n%s", name, i, err, doc)
			}
		}
	}
	sort.Strings(objs.kinds)
	return objs
}

// kproxyYAML is the kproxy.yaml the render holds, from its ConfigMap or,
// with configSecret, its Secret.
func (o *objects) kproxyYAML(t testing.TB) string {
	t.Helper()
	if cm, ok := o.configMaps[fullname]; ok {
		if text, ok := cm.Data["kproxy.yaml"]; ok {
			return text
		}
		t.Fatalf("ConfigMap %s has no kproxy.yaml: %v", fullname, cm.Data)
	}
	if sec, ok := o.secrets[fullname]; ok {
		if text, ok := sec.StringData["kproxy.yaml"]; ok {
			return text
		}
		t.Fatalf("Secret %s has no kproxy.yaml: %v", fullname, sec.StringData)
	}
	t.Fatalf("no ConfigMap or Secret %s in %v", fullname, o.kinds)
	return ""
}

// splitDocuments splits a multi-document YAML file, dropping empty ones.
func splitDocuments(text string) [][]byte {
	var docs [][]byte
	for _, d := range strings.Split("\n"+text, "\n---") {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// decodeStrict decodes one manifest into out, failing on unknown or
// duplicate fields.
func decodeStrict(doc []byte, out any) error {
	return yaml.UnmarshalStrict(doc, out)
}

func (o *objects) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var name string
	var err error
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 ConfigMap":
		name, err = decodeInto(doc, o.configMaps)
	case "v1 Secret":
		name, err = decodeInto(doc, o.secrets)
	case "apps/v1 Deployment":
		name, err = decodeInto(doc, o.deployments)
	case "v1 Service":
		name, err = decodeInto(doc, o.services)
	case "policy/v1 PodDisruptionBudget":
		name, err = decodeInto(doc, o.pdbs)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		name, err = decodeInto(doc, o.hpas)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		name, err = decodeInto(doc, o.serviceMonitors)
	case "networking.k8s.io/v1 NetworkPolicy":
		name, err = decodeInto(doc, o.networkPolicies)
	case "monitoring.coreos.com/v1 PrometheusRule":
		name, err = decodeInto(doc, o.prometheusRules)
	default:
		return fmt.Errorf("unexpected object %s %s", tm.APIVersion, tm.Kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tm.Kind, err)
	}
	if name == "" {
		return fmt.Errorf("%s without a name", tm.Kind)
	}
	o.kinds = append(o.kinds, tm.Kind+"/"+name)
	return nil
}

// decodeInto decodes doc strictly as a T and files it by name.
func decodeInto[T any, P interface {
	*T
	GetName() string
}](doc []byte, into map[string]*T) (string, error) {
	obj := P(new(T))
	if err := decodeStrict(doc, obj); err != nil {
		return "", err
	}
	into[obj.GetName()] = (*T)(obj)
	return obj.GetName(), nil
}
