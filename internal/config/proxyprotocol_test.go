package config

import (
	"net/netip"
	"strings"
	"testing"
)

func TestProxyProtocolKeys(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
listeners:
  proxy_protocol: {mode: required, trusted_cidrs: ["10.0.0.0/8", "192.0.2.7", "::ffff:198.51.100.1"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	pp := cfg.Listeners.ProxyProtocol
	if !pp.Enabled() || pp.Mode != ProxyProtocolRequired {
		t.Fatalf("proxy_protocol = %+v, want required", pp)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("198.51.100.1/32")}
	if got := pp.TrustedPrefixes(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("trusted prefixes %v, want %v", got, want)
	}

	off, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if off.Listeners.ProxyProtocol.Enabled() {
		t.Fatal("proxy_protocol is on by default; the default is off")
	}
}

func TestProxyProtocolValidation(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`{mode: sometimes}`, `listeners.proxy_protocol.mode: "sometimes": must be off, optional or required`},
		{`{mode: required}`, `listeners.proxy_protocol.trusted_cidrs: required when listeners.proxy_protocol.mode is required`},
		{`{mode: optional, trusted_cidrs: []}`, `listeners.proxy_protocol.trusted_cidrs: required when listeners.proxy_protocol.mode is optional`},
		{`{mode: optional, trusted_cidrs: ["10.0.0.0/33"]}`, `listeners.proxy_protocol.trusted_cidrs[0]: "10.0.0.0/33" is not a network`},
		{`{mode: required, trusted_cidrs: ["10.0.0.0/8", "lb.example.com"]}`, `listeners.proxy_protocol.trusted_cidrs[1]: "lb.example.com" is not a network`},
		{`{mode: off, trusted_cidrs: ["10.0.0.0/8"]}`, `listeners.proxy_protocol.trusted_cidrs: set, but listeners.proxy_protocol.mode is off`},
	} {
		_, err := Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nlisteners: {proxy_protocol: " + tc.yaml + "}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}
