package e2elargemessages

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLibrdkafkaIsOfferedProduceV8: librdkafka leaves the records length
// out of a Produce v9+ request whose batch reaches 256 MiB, which offload
// lets through kproxy; a client naming itself as librdkafka does (kcat's
// and confluent-kafka's own ApiVersions fields, as they send them) is
// offered Produce v8 at most, whose length is an int32, and every other
// client the upstream's versions.
func TestLibrdkafkaIsOfferedProduceV8(t *testing.T) {
	e := newEnv(t, []string{"media.clips"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	produceMax := func(name, version string) int16 {
		t.Helper()
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(3)
		req.ClientSoftwareName, req.ClientSoftwareVersion = name, version
		resp := testkit.DialRaw(t, e.kp.Bootstrap, "rdkafka").MustRoundTrip(t, req).(*kmsg.ApiVersionsResponse)
		for _, k := range resp.ApiKeys {
			if k.ApiKey == kmsg.Produce.Int16() {
				return k.MaxVersion
			}
		}
		t.Fatalf("%s %s: no Produce in the ApiVersions response", name, version)
		return 0
	}
	upstream := produceMax("franz-go", "1.20.0")
	if upstream <= 8 {
		t.Fatalf("the upstream offers Produce v%d: the test needs v9 or later", upstream)
	}
	for _, c := range []struct{ name, version string }{
		{"librdkafka", "2.0.2"},                             // kcat
		{"confluent-kafka-python", "2.16.1-rdkafka-2.16.0"}, // confluent-kafka for Python
		{"confluent-kafka-go", "2.16.0"},                    // for Go: librdkafka's version
		{"my-wrapper", "1.0-rdkafka-2.16.0"},                // a wrapper naming librdkafka in its version
	} {
		if got := produceMax(c.name, c.version); got != 8 {
			t.Errorf("%s %s: offered Produce v%d, want v8", c.name, c.version, got)
		}
	}
	if got := produceMax("apache-kafka-java", "4.1.0"); got != upstream {
		t.Errorf("the Java client: offered Produce v%d, want the upstream's v%d", got, upstream)
	}
}
