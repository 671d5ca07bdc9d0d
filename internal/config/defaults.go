package config

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// defaultedConfig is a configuration with every section present (each
// list of sections holding one empty entry) and every key at the value
// kproxy runs with when it is left out. The values come from the code's
// own defaulting: applyDefaults, then the accessors the engine reads the
// keys that applyDefaults leaves empty with.
func defaultedConfig() *Config {
	var c Config
	fillSections(reflect.ValueOf(&c).Elem())
	c.applyDefaults()
	c.applyReadDefaults()
	return &c
}

// fillSections sets every section of the struct v holds: nil pointers
// to structs are allocated and lists of sections get one zero entry.
func fillSections(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch {
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			if f.IsNil() {
				f.Set(reflect.New(f.Type().Elem()))
			}
			fillSections(f.Elem())
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			if f.Len() == 0 {
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			}
			fillSections(f.Index(0))
		case f.Kind() == reflect.Struct && f.Type() != durationType:
			fillSections(f)
		}
	}
}

// applyReadDefaults writes in the keys that applyDefaults leaves empty
// the value kproxy uses for them, as the code reading them decides it.
// Only the defaults file and its tests use it: loading keeps these keys
// empty, where an empty key can mean more than its default (a policy of
// quotas alone has no mode).
func (c *Config) applyReadDefaults() {
	listeners := []*Listeners{&c.Listeners}
	for _, vc := range c.VirtualClusters {
		if vc.Listeners != nil {
			listeners = append(listeners, vc.Listeners)
		}
	}
	for _, l := range listeners {
		enabled := l.PortPerBrokerEnabled()
		l.PortPerBroker = &enabled
		if !l.ProxyProtocol.Enabled() {
			l.ProxyProtocol.Mode = ProxyProtocolOff
		}
	}
	c.Limits.MaxHandshakes = c.Limits.HandshakeLimit()
	if s := c.Upstream.SASL; s != nil && s.TokenTimeout == 0 {
		s.TokenTimeout = auth.DefaultTokenTimeout
	}
	if p := c.Policy; p != nil {
		if p.Mode == "" {
			p.Mode = policyconfig.PolicyModeEnforce
		}
		if p.Default == "" {
			p.Default = policyconfig.PolicyDefaultDeny
		}
		windows, rate := p.QuotaWindowsOrDefault(), p.QuotaAuditSampleRateOrDefault()
		p.QuotaWindows, p.QuotaReplicas, p.QuotaAuditSampleRate = &windows, p.QuotaReplicasOrDefault(), &rate
	}
	if a := c.Audit; a != nil {
		a.Output, a.BufferSize = auditOutput(a), auditBuffer(a)
	}
}

// formatValue writes v as a user would in the file: durations as 10s or
// 1h, lists in flow style, strings quoted only where YAML needs it.
func formatValue(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Type() == durationType {
		return formatDuration(time.Duration(v.Int()))
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return formatString(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			return "[]"
		}
		items := make([]string, v.Len())
		for i := range items {
			items[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return ""
}

// formatDuration is d as users write it: 1h, 10m, 1m30s, 100ms, 0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// formatString writes s as a YAML scalar, quoted only where kproxy's
// YAML decoder would not read it back as this string (yaml.v3 quotes
// YAML 1.1 words such as off, which it reads as strings).
func formatString(s string) string {
	var back any
	if err := yaml.Unmarshal([]byte(s), &back); err == nil && back == s && !strings.ContainsAny(s, "\n#") {
		return s
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}
