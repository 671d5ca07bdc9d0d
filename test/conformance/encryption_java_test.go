package conformance

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Kafka's console producer and consumer (the Java client) for the
// encryption scenario, headers parsed from and printed into each line.

func init() {
	register("java", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		requireJava(t, c)
		encScenario(t, c, e, encClient{produce: e.javaEncProduce, consume: e.javaEncConsume, idempotent: true,
			tombstone: e.javaEncTombstone, readNullable: e.javaEncReadNullable, txn: e.javaEncTxn, readCommitted: e.javaEncReadCommitted,
			txnNote: "the Java client's transactional producer (clients/EncryptionTxn.java), lz4"})
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

// javaNull is the console producer's null.marker (a value so written is
// produced as a null) and the console consumer's null.literal (a null
// value is printed so).
const javaNull = "<null>"

// javaEncTombstone produces key=value and key's tombstone in one run of
// the console producer.
func (e *env) javaEncTombstone(t *testing.T, addr, topic, key, value string) {
	t.Helper()
	e.java(t, e.enc, []byte(key+"\t"+value+"\n"+key+"\t"+javaNull+"\n"), "kafka-console-producer", "--bootstrap-server", addr, "--topic", topic,
		"--reader-property", "parse.key=true", "--reader-property", "null.marker="+javaNull,
		"--command-property", "acks=all", "--command-property", "enable.idempotence=true")
}

// javaEncTxn writes the three transactions in one run of
// EncryptionTxn.java.
func (e *env) javaEncTxn(t *testing.T, c *cellCtx, addr, topic string) txnBatches {
	t.Helper()
	var b txnBatches
	var plan strings.Builder
	for i, end := range []string{"commit", "abort", "commit"} {
		rs := makeRecsFrom(end, i*encTxnRecords, encTxnRecords)
		for _, r := range rs {
			plan.WriteString(r.key + " " + r.value + "\n")
		}
		plan.WriteString(end + "\n")
		if end == "commit" {
			b.committed = append(b.committed, rs...)
		} else {
			b.aborted = append(b.aborted, rs...)
		}
	}
	e.javaEncTxnRun(t, []byte(plan.String()), "produce", addr, topic, name(c, "txn"), "lz4")
	return b
}

// javaEncReadCommitted reads n records of every partition from the
// beginning with a read_committed consumer.
func (e *env) javaEncReadCommitted(t *testing.T, addr, topic string, n int) []got {
	t.Helper()
	out := e.javaEncTxnRun(t, nil, "consume", addr, topic, itoa(int64(n)), "read_committed")
	var gs []got
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("EncryptionTxn.java consume printed %q, want partition offset key value", line)
		}
		p, err1 := strconv.Atoi(f[0])
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("EncryptionTxn.java consume printed %q", line)
		}
		gs = append(gs, got{int32(p), o, f[2], f[3]})
	}
	return gs
}

// javaEncTxnRun runs clients/EncryptionTxn.java with args, fails t if it
// fails, checks that it connected to e.enc only, and returns its output.
// The JIT is C1 alone: the source launcher compiles the program at every
// run, which takes half the time so (1.6 s instead of 3.6), and the
// program moves a few dozen records.
func (e *env) javaEncTxnRun(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	src, err := filepath.Abs("clients/EncryptionTxn.java")
	if err != nil {
		t.Fatal(err)
	}
	p := javaStartJVM(t, 150*time.Second, []string{"-XX:TieredStopAtLevel=1"}, stdin, src, args...)
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	e.checkSockets(t, e.enc, p)
	return p.stdout.String()
}

// javaEncReadNullable reads the first n records of topic with the console
// consumer, each printed as "key|value".
func (e *env) javaEncReadNullable(t *testing.T, addr, topic string, n int) []encNullable {
	t.Helper()
	p := e.java(t, e.enc, nil, "kafka-console-consumer", "--bootstrap-server", addr, "--topic", topic,
		"--from-beginning", "--max-messages", itoa(int64(n)), "--timeout-ms", "60000",
		"--formatter-property", "print.key=true", "--formatter-property", "key.separator=|",
		"--formatter-property", "null.literal="+javaNull)
	var rs []encNullable
	for _, line := range strings.Split(strings.TrimSpace(p.stdout.String()), "\n") {
		k, v, ok := strings.Cut(line, "|")
		if !ok {
			t.Fatalf("kafka-console-consumer printed %q, want key|value", line)
		}
		if v == javaNull {
			rs = append(rs, encNullable{key: k, null: true})
			continue
		}
		rs = append(rs, encNullable{key: k, value: v})
	}
	return rs
}
