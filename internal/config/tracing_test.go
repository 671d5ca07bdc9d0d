package config

import (
	"strings"
	"testing"
)

func TestTracingDefaults(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := cfg.Tracing
	if tr.Enabled || tr.Endpoint != DefaultTracingEndpoint || *tr.Ratio != DefaultTracingRatio || tr.ServiceName != "kproxy" || tr.QueueSize != DefaultTracingQueueSize {
		t.Errorf("tracing defaults %+v (ratio %v)", tr, *tr.Ratio)
	}
	on, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
tracing: {enabled: true, endpoint: "https://collector:4318", ratio: 0, service_name: edge, queue_size: 10}`))
	if err != nil {
		t.Fatal(err)
	}
	if tr := on.Tracing; !tr.Enabled || tr.Endpoint != "https://collector:4318" || *tr.Ratio != 0 || tr.ServiceName != "edge" || tr.QueueSize != 10 {
		t.Errorf("tracing %+v (ratio %v): an explicit ratio of 0 must stay 0", tr, *tr.Ratio)
	}
}

func TestTracingValidation(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`{ratio: 1.5}`, `tracing.ratio: 1.5: must be between 0 and 1`},
		{`{ratio: -0.1}`, `tracing.ratio: -0.1: must be between 0 and 1`},
		{`{endpoint: "127.0.0.1:4318"}`, `tracing.endpoint: "127.0.0.1:4318": must be an http:// or https:// URL with a host`},
		{`{endpoint: "grpc://collector:4317"}`, `tracing.endpoint: "grpc://collector:4317": must be an http:// or https:// URL`},
		{`{queue_size: -1}`, `tracing.queue_size: -1: must be between 1 and 1048576`},
	} {
		_, err := Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\ntracing: " + tc.yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}
