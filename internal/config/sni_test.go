package config

import (
	"strings"
	"testing"
)

const sniBase = `upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
listeners:
`

func TestSNIKeys(t *testing.T) {
	cfg, err := Parse(strings.NewReader(sniBase + `  bind_host: 0.0.0.0
  port_per_broker: false
  sni:
    port: 9094
    bootstrap_host: bootstrap.kafka.example.com
    broker_host_pattern: "broker-$(node_id).kafka.example.com"
    tls: {cert_file: /w.crt, key_file: /w.key}
    certificates: [{cert_file: /b.crt, key_file: /b.key}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Listeners.SNI
	if cfg.Listeners.PortPerBrokerEnabled() || s.BindHost != "0.0.0.0" || s.TLS.ClientAuth != "none" || len(s.Certificates) != 1 {
		t.Fatalf("parsed %+v (port per broker %v)", s, cfg.Listeners.PortPerBrokerEnabled())
	}
	if got := s.BrokerHost(12); got != "broker-12.kafka.example.com" {
		t.Fatalf("BrokerHost(12) = %q", got)
	}
	for name, want := range map[string]int32{"broker-0.kafka.example.com": 0, "BROKER-7.Kafka.Example.COM": 7, "broker-2147483647.kafka.example.com": 2147483647} {
		if id, ok := s.NodeFor(name); !ok || id != want {
			t.Errorf("NodeFor(%q) = %d, %v; want %d", name, id, ok, want)
		}
	}
	for _, name := range []string{"", "broker-.kafka.example.com", "broker-01.kafka.example.com", "broker--1.kafka.example.com",
		"broker-+1.kafka.example.com", "broker-1x.kafka.example.com", "broker-1.kafka.example.com.evil", "broker-2147483648.kafka.example.com",
		"bootstrap.kafka.example.com"} {
		if id, ok := s.NodeFor(name); ok {
			t.Errorf("NodeFor(%q) = node %d; want no match", name, id)
		}
	}
	if on, _ := Parse(strings.NewReader(sniBase + "  bootstrap_port: 9092\n")); !on.Listeners.PortPerBrokerEnabled() {
		t.Fatal("port_per_broker is off by default; the default is on")
	}
}

func TestSNIValidation(t *testing.T) {
	const good = `    bootstrap_host: bootstrap.k.test
    broker_host_pattern: "b-$(node_id).k.test"
    tls: {cert_file: /c, key_file: /k}
`
	for _, tc := range []struct{ yaml, want string }{
		{"  port_per_broker: false\n", "listeners.port_per_broker: false leaves no listener: set listeners.sni too"},
		{"  sni:\n    port: 70000\n" + good, "listeners.sni.port: 70000: must be a TCP port"},
		{"  sni:\n    advertised_port: -1\n" + good, "listeners.sni.advertised_port: -1: must be a TCP port"},
		{"  sni:\n    broker_host_pattern: \"b-$(node_id).k.test\"\n    tls: {cert_file: /c, key_file: /k}\n", `listeners.sni.bootstrap_host: "": required`},
		{"  sni:\n    bootstrap_host: bootstrap.k.test\n    broker_host_pattern: b.k.test\n    tls: {cert_file: /c, key_file: /k}\n", `listeners.sni.broker_host_pattern: "b.k.test": must hold $(node_id) exactly once`},
		{"  sni:\n    bootstrap_host: bootstrap.k.test\n    broker_host_pattern: \"b_$(node_id).k.test\"\n    tls: {cert_file: /c, key_file: /k}\n", `with a node id in place of $(node_id) it must be a DNS name`},
		{"  sni:\n    bootstrap_host: b-1.k.test\n    broker_host_pattern: \"b-$(node_id).k.test\"\n    tls: {cert_file: /c, key_file: /k}\n", `listeners.sni.bootstrap_host: "b-1.k.test" matches listeners.sni.broker_host_pattern`},
		{"  sni:\n    bootstrap_host: bootstrap.k.test\n    broker_host_pattern: \"b-$(node_id).k.test\"\n", "listeners.sni.tls: required"},
		{"  sni:\n" + good + "    certificates: [{cert_file: /x}]\n", "listeners.sni.certificates[0]: cert_file and key_file are both required"},
		{"  sni:\n    bootstrap_host: bootstrap.k.test\n    broker_host_pattern: \"b-$(node_id).k.test\"\n    tls: {cert_file: /c, key_file: /k, client_auth: require}\n", "listeners.sni.tls: client_ca_file: required when client_auth is require"},
	} {
		_, err := Parse(strings.NewReader(sniBase + tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config\n%s\nerror %v\nwant it to contain %q", tc.yaml, err, tc.want)
		}
	}
}
