package testkit

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// MetricValue is the value of the counter or gauge name in g, summed over
// the series whose labels include every name, value pair in labels
// (given as name1, value1, name2, value2, ...): 0 if no series matches.
func MetricValue(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	if len(labels)%2 != 0 {
		t.Fatalf("MetricValue(%s): labels %q are not name, value pairs", name, labels)
	}
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ScrapeMetric reads the unlabelled metric name from the Prometheus text
// that a kproxy admin endpoint (host:port) serves at /metrics, failing
// the test if it is not there.
func ScrapeMetric(t testing.TB, admin, name string) float64 {
	t.Helper()
	v, ok := ScrapeSeries(t, admin, name)
	if !ok {
		t.Fatalf("/metrics has no %s", name)
	}
	return v
}

// ScrapeSeries reads one series, written as the Prometheus text writes it
// (`name` or `name{label="value",...}`), from a kproxy admin endpoint's
// /metrics, and reports whether it is there.
func ScrapeSeries(t testing.TB, admin, series string) (float64, bool) {
	t.Helper()
	_, body := HTTPGet(t, "http://"+admin+"/metrics")
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", l, err)
			}
			return f, true
		}
	}
	return 0, false
}

// HistogramValue is the sample count and sum of the histogram name in g,
// summed over the series whose labels include every name, value pair in
// labels (as for MetricValue).
func HistogramValue(t testing.TB, g prometheus.Gatherer, name string, labels ...string) (count uint64, sum float64) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				count += m.GetHistogram().GetSampleCount()
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return count, sum
}

// LabelValues lists the values label takes in the series of name in g.
func LabelValues(t testing.TB, g prometheus.Gatherer, name, label string) map[string]bool {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	out := map[string]bool{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out
}

// HTTPGet fetches url and returns the status code and body.
func HTTPGet(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}
