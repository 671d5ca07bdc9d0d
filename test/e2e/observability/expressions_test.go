package observability

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The committed artefacts this suite checks; their expressions are read
// from them, never listed a second time here.
const (
	dashboardFile = "../../../deploy/grafana/kproxy.json"
	rulesFile     = "../../../deploy/prometheus/alerts.yaml"
)

// rateInterval stands for Grafana's $__rate_interval: longer than the test,
// so a rate covers all of it, and at least two of its 1 s scrapes.
const rateInterval = "1m"

// expression is one PromQL expression of the dashboard or the rules, named
// by where it is.
type expression struct {
	where, expr string
}

// dashboardExpressions returns every target expression of every panel of
// the committed dashboard (rows' nested panels too), with the dashboard's
// variables replaced as Grafana would with "All" selected.
func dashboardExpressions(t testing.TB) []expression {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var d struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				IncludeAll bool   `json:"includeAll"`
				AllValue   string `json:"allValue"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	vars := map[string]string{"__rate_interval": rateInterval}
	for _, v := range d.Templating.List {
		if v.IncludeAll {
			vars[v.Name] = v.AllValue
		}
	}
	var out []expression
	var walk func(raw []json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatalf("%s: panel: %v", dashboardFile, err)
			}
			for _, tg := range p.Targets {
				if tg.Expr == "" {
					continue
				}
				where := fmt.Sprintf("panel %q target %s", p.Title, tg.RefID)
				out = append(out, expression{where, substitute(t, where, tg.Expr, vars)})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		t.Fatalf("%s has no panel expressions", dashboardFile)
	}
	return out
}

// grafanaVariable is a dashboard variable reference: $name or ${name}.
var grafanaVariable = regexp.MustCompile(`\$\{?(\w+)\}?`)

func substitute(t testing.TB, where, expr string, vars map[string]string) string {
	t.Helper()
	return grafanaVariable.ReplaceAllStringFunc(expr, func(ref string) string {
		name := grafanaVariable.FindStringSubmatch(ref)[1]
		v, ok := vars[name]
		if !ok {
			t.Fatalf("%s uses variable %s, which the dashboard does not define with an All value", where, ref)
		}
		return v
	})
}

// alertRule is one alerting rule of the committed rules file.
type alertRule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
}

// alertRules returns every alerting rule of the committed rules file.
func alertRules(t testing.TB) []alertRule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	var out []alertRule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				r.Expr = strings.TrimSpace(r.Expr)
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no alerting rules", rulesFile)
	}
	return out
}

// ruleNamed returns the rule named alert, failing the test if the file
// has none.
func ruleNamed(t testing.TB, rules []alertRule, alert string) alertRule {
	t.Helper()
	for _, r := range rules {
		if r.Alert == alert {
			return r
		}
	}
	t.Fatalf("%s has no alert %s", rulesFile, alert)
	return alertRule{}
}

// selectorToken is an identifier, with the label matchers that follow it.
var selectorToken = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?`)

// selectors returns the distinct series selectors of a PromQL expression:
// each metric name with its label matchers. An identifier is a metric name
// if label matchers follow it or it is one of kproxy's (kproxy_*);
// function names, keywords, grouping labels and durations are neither.
func selectors(expr string) []string {
	var out []string
	for _, m := range selectorToken.FindAllStringSubmatch(expr, -1) {
		if (m[1] != "" || strings.HasPrefix(m[0], "kproxy_")) && !slices.Contains(out, m[0]) {
			out = append(out, m[0])
		}
	}
	return out
}

// TestSelectors: the selector extraction the rules check relies on.
func TestSelectors(t *testing.T) {
	got := selectors(`sum by (job, le) (rate(kproxy_a_bucket[5m])) / (kproxy_b{x="1", y=~"a.*"} > 0) or up{job=~"kproxy.*"} == 0 unless kproxy_b{x="1", y=~"a.*"} offset 5m`)
	want := []string{"kproxy_a_bucket", `kproxy_b{x="1", y=~"a.*"}`, `up{job=~"kproxy.*"}`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("selectors = %q, want %q", got, want)
	}
}
