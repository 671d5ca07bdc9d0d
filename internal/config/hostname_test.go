package config

import "testing"

// A TLS server name is an ASCII host name (RFC 6066): Unicode case folding
// would route a lookalike (the Kelvin sign U+212A folds to "k", the long s
// U+017F to "s") to the node whose name it imitates.
func TestSNINamesMatchASCIIOnly(t *testing.T) {
	s := &SNIListener{BootstrapHost: "bootstrap.kafka.test", BrokerHostPattern: "broker-$(node_id).kafka.test"}
	for _, name := range []string{
		"bro\u212Aer-1.kafka.test",  // Kelvin sign for k
		"broker-1.\u212Aafka.test",  // in the pattern's suffix
		"BRO\u212AER-1.KAFKA.TEST",  // and upper-cased
		"broker-1.kafka.te\u017Ft",  // long s for s
		"broker-1.kafka.test.",      // trailing dot (RFC 6066: none)
		"broker-1.kafka.test\x00",   // NUL
		"broker-\uff11.kafka.test",  // fullwidth digit one
		"broker-1.kafka_x.test",     // underscore
		"broker-1.kafka.test\u200b", // zero-width space
	} {
		if id, ok := s.NodeFor(name); ok {
			t.Errorf("NodeFor(%q) = node %d; want no match (not an ASCII host name)", name, id)
		}
	}
	for _, name := range []string{"bootstrap.\u212Aafka.test", "BOOTSTRAP.\u212AAFKA.TEST", "bootstrap.kafka.te\u017Ft", "bootstrap.kafka.test."} {
		if s.IsBootstrapHost(name) {
			t.Errorf("IsBootstrapHost(%q) = true; want false (not an ASCII host name)", name)
		}
	}
	// ASCII case still folds, as DNS names compare.
	if id, ok := s.NodeFor("BROKER-1.Kafka.TEST"); !ok || id != 1 {
		t.Errorf("NodeFor(BROKER-1.Kafka.TEST) = %d, %v; want node 1", id, ok)
	}
	if !s.IsBootstrapHost("Bootstrap.KAFKA.test") {
		t.Error("IsBootstrapHost(Bootstrap.KAFKA.test) = false; want true")
	}
}

func TestHostName(t *testing.T) {
	for in, want := range map[string]string{"a.b": "a.b", "A-1.B": "a-1.b", "x": "x"} {
		if got, ok := HostName(in); !ok || got != want {
			t.Errorf("HostName(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".", "a..b", "-a.b", "a-.b", "\u212A", "a.b.", "a b", string(make([]byte, 254))} {
		if got, ok := HostName(in); ok {
			t.Errorf("HostName(%q) = %q; want not a host name", in, got)
		}
	}
}

// FuzzSNINodeFor: whatever server name a client sends, a name routed to a
// node (or to the bootstrap servers) is an ASCII host name, and is the
// node's own name up to ASCII case.
func FuzzSNINodeFor(f *testing.F) {
	for _, seed := range []string{"broker-1.kafka.test", "BROKER-7.KAFKA.TEST", "bro\u212Aer-1.kafka.test", "broker-01.kafka.test",
		"bootstrap.kafka.test", "broker-1.kafka.te\u017Ft", "", "broker-.kafka.test", "broker-1.kafka.test."} {
		f.Add(seed)
	}
	s := &SNIListener{BootstrapHost: "bootstrap.kafka.test", BrokerHostPattern: "broker-$(node_id).kafka.test"}
	f.Fuzz(func(t *testing.T, name string) {
		id, ok := s.NodeFor(name)
		boot := s.IsBootstrapHost(name)
		if !ok && !boot {
			return
		}
		if _, valid := HostName(name); !valid {
			t.Fatalf("%q routed (node %d %v, bootstrap %v) but is not an ASCII host name", name, id, ok, boot)
		}
		if ok && lowerASCII(name) != s.BrokerHost(id) {
			t.Fatalf("%q routed to node %d, whose name is %q", name, id, s.BrokerHost(id))
		}
	})
}
