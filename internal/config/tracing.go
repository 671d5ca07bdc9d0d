package config

import (
	"math"
	"net/url"
)

// Tracing defaults.
const (
	DefaultTracingEndpoint    = "http://127.0.0.1:4318"
	DefaultTracingRatio       = 0.01
	DefaultTracingServiceName = "kproxy"
	DefaultTracingQueueSize   = 2048
)

// Tracing configures OpenTelemetry request traces (docs/observability in
// the README): one span per sampled Kafka request, exported over OTLP/HTTP.
type Tracing struct {
	// Enabled turns tracing on; it is off by default.
	Enabled bool `yaml:"enabled"`
	// Endpoint is the OTLP/HTTP collector's base URL (http or https);
	// spans go to its /v1/traces path.
	Endpoint string `yaml:"endpoint"`
	// Ratio is the share of requests traced, 0 to 1. Kafka requests carry
	// no trace context, so every request span is a root and this is the
	// parent-based ratio sampler's ratio.
	Ratio *float64 `yaml:"ratio"`
	// ServiceName is the service.name resource attribute.
	ServiceName string `yaml:"service_name"`
	// QueueSize bounds the sampled requests waiting for export; when it
	// is full a span is dropped (and counted), never waited for.
	QueueSize int `yaml:"queue_size"`
}

func (t *Tracing) applyDefaults() {
	if t.Endpoint == "" {
		t.Endpoint = DefaultTracingEndpoint
	}
	if t.Ratio == nil {
		r := DefaultTracingRatio
		t.Ratio = &r
	}
	if t.ServiceName == "" {
		t.ServiceName = DefaultTracingServiceName
	}
	if t.QueueSize == 0 {
		t.QueueSize = DefaultTracingQueueSize
	}
}

func (t *Tracing) validate(bad func(key, format string, args ...any)) {
	if u, err := url.Parse(t.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("tracing.endpoint", "%q: must be an http:// or https:// URL with a host (an OTLP/HTTP receiver, e.g. %s)", t.Endpoint, DefaultTracingEndpoint)
	}
	if r := *t.Ratio; math.IsNaN(r) || r < 0 || r > 1 {
		bad("tracing.ratio", "%v: must be between 0 and 1", r)
	}
	if t.QueueSize < 1 || t.QueueSize > 1<<20 {
		bad("tracing.queue_size", "%d: must be between 1 and 1048576", t.QueueSize)
	}
}
