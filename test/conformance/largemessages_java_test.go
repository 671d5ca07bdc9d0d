package conformance

import (
	"path/filepath"
	"testing"
)

// The Java client for the large-messages scenario: clients/LargeMessages.java
// (Kafka's producer and consumer with the settings records up to 500 MiB
// need), run by Java's source launcher through test/kafka/tool.sh.

func init() {
	register("java", scenarioLargeMessages, func(t *testing.T, c *cellCtx, e *env) {
		requireJava(t, c)
		lmRoundTrip(t, c, e, lmClient{produce: e.javaLMProduce, consume: e.javaLMConsume})
	})
}

// javaLMHeap is the JVM's heap: a 500 MiB value and the batch that holds
// it (producer), or the fetch response and the value copied out of it
// (consumer), with room to spare.
const javaLMHeap = "-Xmx3g"

func (e *env) javaLMProduce(t *testing.T, topic, txnID string, plan []lmBatch) []lmDigest {
	t.Helper()
	args := []string{"produce", e.lm.BootstrapAddr(), topic}
	if txnID != "" {
		args = append(args, txnID)
	}
	return parseLMDigests(t, "LargeMessages.java produce", e.javaLM(t, lmPlanText(plan), args...))
}

func (e *env) javaLMConsume(t *testing.T, topic string, n int, readCommitted bool) []lmDigest {
	t.Helper()
	iso := "read_uncommitted"
	if readCommitted {
		iso = "read_committed"
	}
	return parseLMDigests(t, "LargeMessages.java consume", e.javaLM(t, nil, "consume", e.lm.BootstrapAddr(), topic, itoa(int64(n)), iso))
}

// javaLM runs LargeMessages.java with args, fails t if it fails, checks
// that it connected to e.lm only, and returns its output.
func (e *env) javaLM(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	src, err := filepath.Abs("clients/LargeMessages.java")
	if err != nil {
		t.Fatal(err)
	}
	p := javaStartJVM(t, lmClientTimeout, []string{javaLMHeap}, stdin, src, args...)
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	e.checkSockets(t, e.lm, p)
	return p.stdout.String()
}
