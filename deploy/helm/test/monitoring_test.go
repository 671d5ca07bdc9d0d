package helmtest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"
)

// The chart's copies of the alerts and the dashboard, and their sources.
var (
	alertsSource    = filepath.Join("..", "..", "prometheus", "alerts.yaml")
	alertsCopy      = filepath.Join(chartDir, "files", "alerts.yaml")
	dashboardSource = filepath.Join("..", "..", "grafana", "kproxy.json")
	dashboardCopy   = filepath.Join(chartDir, "files", "kproxy-dashboard.json")
)

// TestChartMonitoringFilesMatchSources: the chart's alerts and dashboard
// are deploy/prometheus/alerts.yaml and deploy/grafana/kproxy.json byte
// for byte; -update copies them.
func TestChartMonitoringFilesMatchSources(t *testing.T) {
	for src, dst := range map[string]string{alertsSource: alertsCopy, dashboardSource: dashboardCopy} {
		want, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		checkGenerated(t, dst, want, "TestChartMonitoringFilesMatchSources")
	}
}

// TestPrometheusRuleAndDashboard: enabled, the PrometheusRule holds the
// alert groups of alerts.yaml and the dashboard ConfigMap carries the
// dashboard and Grafana sidecar's label; disabled, neither is rendered.
func TestPrometheusRuleAndDashboard(t *testing.T) {
	off := render(t, upstreamValues)
	if len(off.prometheusRules) != 0 || off.configMaps[fullname+"-dashboard"] != nil {
		t.Errorf("rendered by default: %v", off.kinds)
	}
	objs := render(t, upstreamValues, `
prometheusRule: {enabled: true, labels: {release: prometheus}}
grafanaDashboard: {enabled: true, annotations: {grafana_folder: Kafka}}
`)
	rule := mustGet(t, objs.prometheusRules, fullname)
	raw, err := os.ReadFile(alertsSource)
	if err != nil {
		t.Fatal(err)
	}
	var alerts struct {
		Groups []struct {
			Name  string           `json:"name"`
			Rules []map[string]any `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &alerts); err != nil {
		t.Fatal(err)
	}
	if len(rule.Spec.Groups) != len(alerts.Groups) || len(alerts.Groups) == 0 {
		t.Fatalf("PrometheusRule has %d groups, alerts.yaml %d", len(rule.Spec.Groups), len(alerts.Groups))
	}
	for i, g := range alerts.Groups {
		got := rule.Spec.Groups[i]
		if got.Name != g.Name || len(got.Rules) != len(g.Rules) {
			t.Fatalf("group %d: %s with %d rules, alerts.yaml has %s with %d", i, got.Name, len(got.Rules), g.Name, len(g.Rules))
		}
		for j, r := range g.Rules {
			if got.Rules[j].Alert != r["alert"] || got.Rules[j].Expr.String() != r["expr"] ||
				!reflect.DeepEqual(got.Rules[j].Annotations, stringMap(r["annotations"])) {
				t.Errorf("rule %s differs from alerts.yaml's:\n%+v\n%v", r["alert"], got.Rules[j], r)
			}
		}
	}
	if rule.Labels["release"] != "prometheus" {
		t.Errorf("PrometheusRule labels %v lack prometheusRule.labels", rule.Labels)
	}

	cm := mustGet(t, objs.configMaps, fullname+"-dashboard")
	dashboard, err := os.ReadFile(dashboardSource)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "Kafka" {
		t.Errorf("dashboard ConfigMap labels %v annotations %v: want grafana_dashboard \"1\" and the folder", cm.Labels, cm.Annotations)
	}
	if cm.Data["kproxy.json"] != string(bytes.TrimRight(dashboard, "\n")) {
		t.Errorf("dashboard ConfigMap's kproxy.json is not %s", dashboardSource)
	}
}

// checkAlertsMatchJob checks the job the ServiceMonitor gives kproxy's
// scrapes is the one alerts.yaml's KproxyNotReady looks for when a scrape
// fails.
func checkAlertsMatchJob(t *testing.T, job string) {
	t.Helper()
	raw, err := os.ReadFile(alertsSource)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`up\{job=~"([^"]+)"\}`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s has no up{job=~...} matcher", alertsSource)
	}
	if job == "" || !regexp.MustCompile("^(?:"+string(m[1])+")$").MatchString(job) {
		t.Errorf("scrape job %q does not match alerts.yaml's job=~%q: KproxyNotReady would never fire", job, m[1])
	}
}

func stringMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, e := range m {
		out[k], _ = e.(string)
	}
	return out
}
