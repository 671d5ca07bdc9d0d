package config

import (
	"strings"
	"testing"
)

const overrideBase = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nlisteners: {bind_host: 127.0.0.1, bootstrap_port: 9092, broker_port_base: 9100}\n"

func TestOverridesSetKeysBeforeDefaults(t *testing.T) {
	cfg, err := Parse(strings.NewReader(overrideBase),
		Override{Key: "listeners.bind_host", Value: "10.0.0.5", Source: "KPROXY_BIND_HOST"},
		Override{Key: "listeners.bootstrap_port", Value: "19092", Source: "KPROXY_BOOTSTRAP_PORT"},
		Override{Key: "listeners.bootstrap_port", Value: "29092", Source: "--bootstrap-port"}, // the later one wins
		Override{Key: "listeners.broker_port_base", Value: "29100", Source: "KPROXY_BROKER_PORT_BASE"},
		Override{Key: "admin.listen", Value: "0.0.0.0:9644", Source: "KPROXY_ADMIN_LISTEN"})
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Listeners
	// The file left advertised_host out: it defaults to the bind host
	// from outside, as it would to one in the file.
	if l.BindHost != "10.0.0.5" || l.AdvertisedHost != "10.0.0.5" || l.BootstrapPort != 29092 || l.BrokerPortBase != 29100 || cfg.Admin.Listen != "0.0.0.0:9644" {
		t.Errorf("listeners %+v, admin %q", l, cfg.Admin.Listen)
	}
}

func TestOverridesValidatedNamingTheirSource(t *testing.T) {
	for _, tc := range []struct {
		o    Override
		says string
	}{
		{Override{"listeners.bootstrap_port", "70000", "KPROXY_BOOTSTRAP_PORT"}, "listeners.bootstrap_port (set by KPROXY_BOOTSTRAP_PORT): 70000: must be a TCP port"},
		{Override{"listeners.broker_port_base", "nine", "--broker-port-base"}, `--broker-port-base: listeners.broker_port_base: "nine" is not a number`},
		{Override{"listeners.bind_host", "0.0.0.0", "KPROXY_BIND_HOST"}, "listeners.advertised_host: required when listeners.bind_host (set by KPROXY_BIND_HOST) is 0.0.0.0"},
		{Override{"admin.listen", "9644", "KPROXY_ADMIN_LISTEN"}, `admin.listen (set by KPROXY_ADMIN_LISTEN): "9644" is not host:port`},
		{Override{"listeners.tls", "on", "KPROXY_TLS"}, `KPROXY_TLS: "listeners.tls" cannot be overridden`},
	} {
		_, err := Parse(strings.NewReader(overrideBase), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: error %v, want it to say %q", tc.o, err, tc.says)
		}
	}
}
