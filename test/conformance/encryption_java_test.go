package conformance

import (
	"strings"
	"testing"
)

// Kafka's console producer and consumer (the Java client) for the
// encryption scenario, headers parsed from and printed into each line.

func init() {
	register("java", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		requireJava(t, c)
		encRoundTrip(t, c, e, e.javaEncProduce, e.javaEncConsume)
	})
}

// javaEncProduce writes each record as "h:v,h:v<TAB>key<TAB>value" (the
// console producer's default separators with parse.headers).
func (e *env) javaEncProduce(t *testing.T, addr, topic, codec string, rs []encRec) {
	t.Helper()
	var in strings.Builder
	for _, r := range rs {
		in.WriteString(javaHeaders(r.headers) + "\t" + r.key + "\t" + r.value + "\n")
	}
	e.java(t, e.enc, []byte(in.String()), "kafka-console-producer", "--bootstrap-server", addr, "--topic", topic,
		"--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
		"--command-property", "acks=all", "--command-property", "enable.idempotence=true",
		"--command-property", "compression.type="+codec)
}

// javaEncConsume reads n records from the beginning, each printed as
// "h:v,h:v|key|value".
func (e *env) javaEncConsume(t *testing.T, addr, topic string, n int) []encRec {
	t.Helper()
	p := e.java(t, e.enc, nil, "kafka-console-consumer", "--bootstrap-server", addr, "--topic", topic,
		"--from-beginning", "--max-messages", itoa(int64(n)), "--timeout-ms", "60000",
		"--formatter-property", "print.headers=true", "--formatter-property", "print.key=true",
		"--formatter-property", "key.separator=|", "--formatter-property", "headers.separator=,",
		"--formatter-property", "headers.key.separator=:")
	var got []encRec
	for _, line := range strings.Split(strings.TrimSpace(p.stdout.String()), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			t.Fatalf("kafka-console-consumer printed %q, want headers|key|value", line)
		}
		g := encRec{key: f[1], value: f[2]}
		for _, kv := range strings.Split(f[0], ",") {
			k, v, _ := strings.Cut(kv, ":")
			g.headers = append(g.headers, encHeader{k, v})
		}
		got = append(got, g)
	}
	return got
}

func javaHeaders(hs []encHeader) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, h.key+":"+h.value)
	}
	return strings.Join(parts, ",")
}
