package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/twmb/franz-go/pkg/kadm"
)

func init() {
	register("java", "produce-consume", javaProduceConsume)
	register("java", "resume", javaResume)
	register("java", "kip848", javaKIP848)
	register("java", "admin", javaAdmin)
	register("java", "transactions", javaTransactions)
	register("java", "addresses", javaAddresses)
	register("java", "tls-scram", javaTLSSCRAM)
	register("java", "sni", javaTLSSCRAM)
}

const toolSh = "../kafka/tool.sh"

// javaRecords is how many records the verifiable tools move per scenario.
const javaRecords = 5000

// javaUnavailable says why Kafka's tools cannot run here, or "".
var javaUnavailable = sync.OnceValue(func() string {
	if _, err := exec.LookPath("java"); err != nil {
		return "java is not on PATH"
	}
	cache := os.Getenv("KAFKA_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "kproxy-kafka")
	}
	if _, err := os.Stat(filepath.Join(cache, ".fetched")); err != nil {
		return "Kafka's tools are not fetched (bash test/kafka/fetch.sh)"
	}
	return ""
})

func requireJava(t *testing.T, c *cellCtx) {
	t.Helper()
	if r := javaUnavailable(); r != "" {
		skipCell(t, c, r)
	}
}

// javaEnv: never fetch from a test, and log every connection the Java
// client makes (log4j2-conformance.xml). KAFKA_TOOL_OPTS comes last.
func javaEnv() []string {
	abs, _ := filepath.Abs("log4j2-conformance.xml")
	return []string{"KAFKA_NO_FETCH=1", "KAFKA_TOOL_OPTS=" + os.Getenv("KAFKA_TOOL_OPTS") + " -Dlog4j2.configurationFile=" + abs}
}

// javaStart starts a Kafka tool in the background; jvm are extra JVM
// flags.
func javaStart(t *testing.T, timeout time.Duration, stdin []byte, tool string, args ...string) *proc {
	t.Helper()
	return javaStartJVM(t, timeout, nil, stdin, tool, args...)
}

func javaStartJVM(t *testing.T, timeout time.Duration, jvm []string, stdin []byte, tool string, args ...string) *proc {
	t.Helper()
	env := javaEnv()
	env[len(env)-1] += " " + strings.Join(jvm, " ")
	return startProc(t, timeout, stdin, env, toolSh, append([]string{tool}, args...)...)
}

// java runs a Kafka tool to completion against kproxy px, fails t if it
// fails, and checks that it connected to kproxy only.
func (e *env) java(t *testing.T, px *kproxytest.Kproxy, stdin []byte, tool string, args ...string) *proc {
	t.Helper()
	var jvm []string
	if px == e.oauth {
		// Kafka 4 fetches tokens only from URLs this property lists.
		jvm = append(jvm, "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+e.idp.TokenURL())
	}
	p := javaStartJVM(t, 150*time.Second, jvm, stdin, tool, args...)
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	e.checkSockets(t, px, p)
	return p
}

// javaProps writes a client properties file: extra lines, plus TLS and
// SCRAM-SHA-512 settings when px terminates TLS and SCRAM, or TLS and
// OAUTHBEARER with the provider's tokens when it is e.oauth.
func (e *env) javaProps(t *testing.T, px *kproxytest.Kproxy, extra ...string) string {
	t.Helper()
	lines := slices.Clone(extra)
	if e.terminatesSASL(px) {
		lines = append(lines,
			"security.protocol=SASL_SSL",
			"sasl.mechanism=SCRAM-SHA-512",
			fmt.Sprintf(`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, saslUser, saslPass),
			"ssl.truststore.type=PEM",
			"ssl.truststore.location="+e.pki.CAFile)
	}
	if px == e.oauth {
		lines = append(lines,
			"security.protocol=SASL_SSL",
			"sasl.mechanism=OAUTHBEARER",
			"sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
			"sasl.oauthbearer.token.endpoint.url="+e.idp.TokenURL(),
			"sasl.oauthbearer.client.credentials.client.id="+oauthClientID,
			"sasl.oauthbearer.client.credentials.client.secret="+oauthSecret,
			"sasl.oauthbearer.scope="+oauthScope,
			"sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
			"ssl.truststore.type=PEM",
			"ssl.truststore.location="+e.pki.CAFile)
	}
	return testkit.WriteFile(t, "client.properties", strings.Join(lines, "\n")+"\n")
}

// verifiableEvent is one JSON line of kafka-verifiable-producer or
// kafka-verifiable-consumer.
type verifiableEvent struct {
	Name      string  `json:"name"`
	Key       *string `json:"key"`
	Value     string  `json:"value"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Exception string  `json:"exception"`
	Message   string  `json:"message"`
	Sent      int     `json:"sent"`
	Acked     int     `json:"acked"`
	Success   *bool   `json:"success"`
	Error     string  `json:"error"`
	// records_consumed: what one poll returned, per partition.
	Partitions []struct {
		Partition int32 `json:"partition"`
		Count     int   `json:"count"`
		MinOffset int64 `json:"minOffset"`
		MaxOffset int64 `json:"maxOffset"`
	} `json:"partitions"`
	Count int `json:"count"`
}

func parseVerifiable(t *testing.T, out string) []verifiableEvent {
	t.Helper()
	var evs []verifiableEvent
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var ev verifiableEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("verifiable tool printed %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func (ev verifiableEvent) got() got {
	k := ""
	if ev.Key != nil {
		k = *ev.Key
	}
	return got{ev.Partition, ev.Offset, k, ev.Value}
}

// verifiableProducerProps: idempotent, retrying (the tool's default is
// retries=0), acks are given with --acks.
var verifiableProducerProps = []string{"enable.idempotence=true", "retries=2147483647", "delivery.timeout.ms=120000", "max.in.flight.requests.per.connection=5"}

// javaProduce runs kafka-verifiable-producer for n keyed records (values
// "PREFIX.N", PREFIX an integer) with acks=all and returns what it acked; any send error
// fails t.
func (e *env) javaProduce(t *testing.T, px *kproxytest.Kproxy, topic string, prefix, n int) []got {
	t.Helper()
	p := e.java(t, px, nil, "kafka-verifiable-producer", "--bootstrap-server", e.seed(px), "--topic", topic,
		"--max-messages", strconv.Itoa(n), "--acks", "-1", "--repeating-keys", strconv.Itoa(numKeys), "--value-prefix", strconv.Itoa(prefix),
		"--command-config", e.javaProps(t, px, verifiableProducerProps...))
	acked, errs, data := verifiableProduced(t, parseVerifiable(t, p.stdout.String()))
	for i, err := range errs {
		if i < 3 {
			t.Errorf("kafka-verifiable-producer: %s", err)
		}
	}
	if len(acked) != n || data.Acked != n {
		t.Fatalf("kafka-verifiable-producer acked %d (tool_data: sent %d, acked %d) of %d records, %d errors", len(acked), data.Sent, data.Acked, n, len(errs))
	}
	return acked
}

func verifiableProduced(t *testing.T, evs []verifiableEvent) (acked []got, errs []string, data verifiableEvent) {
	for _, ev := range evs {
		switch ev.Name {
		case "producer_send_success":
			acked = append(acked, ev.got())
		case "producer_send_error":
			errs = append(errs, ev.Exception+": "+ev.Message)
		case "tool_data":
			data = ev
		}
	}
	return acked, errs, data
}

// javaConsume runs kafka-verifiable-consumer in group (protocol classic or
// consumer) until it has read n records, and returns them.
func (e *env) javaConsume(t *testing.T, px *kproxytest.Kproxy, topic, group, protocol string, n int) []got {
	t.Helper()
	p := e.java(t, px, nil, "kafka-verifiable-consumer", "--bootstrap-server", e.seed(px), "--topic", topic,
		"--group-id", group, "--group-protocol", protocol, "--max-messages", strconv.Itoa(n), "--verbose",
		"--command-config", e.javaProps(t, px, "auto.offset.reset=earliest"))
	gs, commitErrs := verifiableConsumed(parseVerifiable(t, p.stdout.String()))
	for _, err := range commitErrs {
		t.Errorf("kafka-verifiable-consumer commit failed: %s", err)
	}
	return gs
}

func verifiableConsumed(evs []verifiableEvent) (gs []got, commitErrs []string) {
	for _, ev := range evs {
		switch ev.Name {
		case "record_data":
			gs = append(gs, ev.got())
		case "offsets_committed":
			if ev.Success != nil && !*ev.Success {
				commitErrs = append(commitErrs, ev.Error)
			}
		}
	}
	return gs, commitErrs
}

// asRecs turns acked records into the records a consumer must see.
func asRecs(gs []got) []rec {
	rs := make([]rec, len(gs))
	for i, g := range gs {
		rs[i] = rec{g.key, g.value}
	}
	return rs
}

// checkAcked fails unless consumed holds every acked record, at its acked
// partition and offset, and nothing else.
func checkAcked(t *testing.T, what string, consumed, acked []got) {
	t.Helper()
	at := make(map[[2]int64]got, len(acked))
	for _, a := range acked {
		at[[2]int64{int64(a.partition), a.offset}] = a
	}
	lost := 0
	seen := map[[2]int64]bool{}
	for _, g := range consumed {
		k := [2]int64{int64(g.partition), g.offset}
		if a, ok := at[k]; ok && (a.key != g.key || a.value != g.value) {
			t.Errorf("%s: %d/%d holds %s=%s, but %s=%s was acked there", what, g.partition, g.offset, g.key, g.value, a.key, a.value)
		}
		seen[k] = true
	}
	for k, a := range at {
		if !seen[k] {
			if lost++; lost <= 3 {
				t.Errorf("%s: acked record %s=%s at %d/%d was never consumed", what, a.key, a.value, k[0], k[1])
			}
		}
	}
	if lost > 0 {
		t.Errorf("%s: %d of %d acked records lost", what, lost, len(acked))
	}
}

// javaVerifiedRoundTrip produces javaRecords into a new topic with
// kafka-verifiable-producer and consumes them in a new group of
// groupProtocol with kafka-verifiable-consumer (what names it in
// failures), checking every acked record arrives and is committed. It
// returns the topic, the group and the acked records.
func javaVerifiedRoundTrip(t *testing.T, c *cellCtx, e *env, groupProtocol, what string) (topic, group string, acked []got) {
	t.Helper()
	topic = e.newTopic(t, c, "t", partitions)
	acked = e.javaProduce(t, e.plain, topic, 1, javaRecords)
	group = name(c, "g")
	gs := e.javaConsume(t, e.plain, topic, group, groupProtocol, javaRecords)
	checkAcked(t, what, gs, acked)
	checkRecords(t, what, gs, asRecs(acked))
	e.checkCommitted(t, group, topic, javaRecords)
	return topic, group, acked
}

func javaProduceConsume(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	javaVerifiedRoundTrip(t, c, e, "classic", "kafka-verifiable-consumer")

	t.Run("console", func(t *testing.T) {
		topic := e.newTopic(t, c, "console", partitions)
		want := makeRecs("console", 1000)
		e.java(t, e.plain, kcatInput(want), "kafka-console-producer", "--bootstrap-server", e.bootstrap(), "--topic", topic,
			"--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
			"--command-property", "acks=all", "--command-property", "enable.idempotence=true")
		group := name(c, "console-g")
		p := e.java(t, e.plain, nil, "kafka-console-consumer", "--bootstrap-server", e.bootstrap(), "--topic", topic,
			"--group", group, "--from-beginning", "--max-messages", "1000", "--timeout-ms", "60000",
			"--formatter-property", "print.key=true", "--formatter-property", "print.partition=true",
			"--formatter-property", "print.offset=true", "--formatter-property", "key.separator=|")
		checkRecords(t, "kafka-console-consumer", parseConsole(t, p.stdout.String()), want)
		e.checkCommitted(t, group, topic, 1000)
	})

	t.Run("perf-test", func(t *testing.T) {
		topic := e.newTopic(t, c, "perf", partitions)
		p := e.java(t, e.plain, nil, "kafka-producer-perf-test", "--topic", topic, "--num-records", "10000", "--record-size", "100",
			"--throughput", "-1", "--bootstrap-server", e.bootstrap(), "--command-property", "acks=all", "enable.idempotence=true")
		out := p.stdout.String()
		if !regexp.MustCompile(`(?m)^10000 records sent`).MatchString(out) {
			t.Errorf("kafka-producer-perf-test did not report 10000 records sent:\n%s", lastLines(out, 5))
		}
		if strings.Contains(p.stderr.String(), "ERROR") || strings.Contains(p.stderr.String(), "Exception") {
			t.Errorf("kafka-producer-perf-test logged errors:\n%s", lastLines(p.stderr.String(), 10))
		}
		if m := regexp.MustCompile(`(?m)^10000 records sent, ([0-9.]+) records/sec .*?, ([0-9.]+) ms avg latency`).FindStringSubmatch(out); m != nil {
			rate, _ := strconv.ParseFloat(m[1], 64)
			c.note("kafka-producer-perf-test: 10000 records at %.0f records/s, %s ms avg latency", rate, m[2])
		}
		ctx, cancel := ctxTimeout(20 * time.Second)
		defer cancel()
		ends, err := e.admin(t).ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if sum != 10000 {
			t.Errorf("topic holds %d records after the perf test, want 10000", sum)
		}
	})
}

// parseConsole parses "Partition:P|Offset:O|key|value" lines.
func parseConsole(t *testing.T, out string) []got {
	t.Helper()
	var gs []got
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 || !strings.HasPrefix(f[0], "Partition:") || !strings.HasPrefix(f[1], "Offset:") {
			t.Fatalf("kafka-console-consumer printed %q", line)
		}
		p, _ := strconv.Atoi(strings.TrimPrefix(f[0], "Partition:"))
		o, _ := strconv.ParseInt(strings.TrimPrefix(f[1], "Offset:"), 10, 64)
		gs = append(gs, got{int32(p), o, f[2], f[3]})
	}
	return gs
}

func javaResume(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	first := e.javaProduce(t, e.plain, topic, 1, 2000)
	gs := e.javaConsume(t, e.plain, topic, group, "classic", 2000)
	checkAcked(t, "first session", gs, first)
	checkRecords(t, "first session", gs, asRecs(first))
	e.checkCommitted(t, group, topic, 2000)
	second := e.javaProduce(t, e.plain, topic, 2, 300)
	gs = e.javaConsume(t, e.plain, topic, group, "classic", 300)
	checkAcked(t, "second session (from the commits)", gs, second)
	checkRecords(t, "second session (from the commits)", gs, asRecs(second))
	e.checkCommitted(t, group, topic, 2300)
}

// javaKIP848: kafka-verifiable-consumer and kafka-console-consumer with
// group.protocol=consumer.
func javaKIP848(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	topic, group, acked := javaVerifiedRoundTrip(t, c, e, "consumer", "kafka-verifiable-consumer --group-protocol consumer")
	e.checkGroupType(t, group, "consumer")

	cgroup := name(c, "console-g")
	p := e.java(t, e.plain, nil, "kafka-console-consumer", "--bootstrap-server", e.bootstrap(), "--topic", topic,
		"--group", cgroup, "--command-property", "group.protocol=consumer", "--from-beginning",
		"--max-messages", strconv.Itoa(javaRecords), "--timeout-ms", "60000",
		"--formatter-property", "print.key=true", "--formatter-property", "print.partition=true",
		"--formatter-property", "print.offset=true", "--formatter-property", "key.separator=|")
	checkRecords(t, "kafka-console-consumer group.protocol=consumer", parseConsole(t, p.stdout.String()), asRecs(acked))
	e.checkGroupType(t, cgroup, "consumer")
}

func javaAdmin(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	b := e.bootstrap()
	topic := name(c, "t")
	e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "3")
	e.javaUntil(t, "kafka-topics --describe shows 3 partitions", func() bool {
		out := e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--describe", "--topic", topic).stdout.String()
		return strings.Contains(out, "PartitionCount: 3") && strings.Count(out, "Leader: ") == 3 && !strings.Contains(out, "Leader: none")
	})
	if out := e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--list").stdout.String(); !slices.Contains(strings.Fields(out), topic) {
		t.Errorf("kafka-topics --list does not list %s", topic)
	}
	e.java(t, e.plain, nil, "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic,
		"--alter", "--add-config", "retention.ms=3600000")
	e.javaUntil(t, "kafka-configs --describe shows retention.ms=3600000", func() bool {
		return strings.Contains(e.java(t, e.plain, nil, "kafka-configs", "--bootstrap-server", b, "--entity-type", "topics",
			"--entity-name", topic, "--describe").stdout.String(), "retention.ms=3600000")
	})
	e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--alter", "--topic", topic, "--partitions", "4")
	e.javaUntil(t, "kafka-topics --describe shows 4 partitions", func() bool {
		return strings.Contains(e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--describe", "--topic", topic).stdout.String(), "PartitionCount: 4")
	})

	group := name(c, "g")
	e.javaProduce(t, e.plain, topic, 1, 100)
	e.javaConsume(t, e.plain, topic, group, "classic", 100)
	if out := e.java(t, e.plain, nil, "kafka-consumer-groups", "--bootstrap-server", b, "--list").stdout.String(); !slices.Contains(strings.Fields(out), group) {
		t.Errorf("kafka-consumer-groups --list does not list %s", group)
	}
	p := e.java(t, e.plain, nil, "kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--group", group)
	out := p.stdout.String() + p.stderr.String()
	if !strings.Contains(out, "has no active members") || strings.Count(out, topic) != 4 {
		t.Errorf("kafka-consumer-groups --describe --group %s:\n%s", group, out)
	}
	p = e.java(t, e.plain, nil, "kafka-consumer-groups", "--bootstrap-server", b, "--delete", "--group", group)
	if !strings.Contains(p.stdout.String(), "successful") {
		t.Errorf("kafka-consumer-groups --delete:\n%s%s", p.stdout.String(), p.stderr.String())
	}
	e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--delete", "--topic", topic)
	e.javaUntil(t, "kafka-topics --list no longer lists the topic", func() bool {
		return !slices.Contains(strings.Fields(e.java(t, e.plain, nil, "kafka-topics", "--bootstrap-server", b, "--list").stdout.String()), topic)
	})
}

// javaUntil runs check (which runs tools) until it holds, for up to 30s:
// brokers apply admin changes from the metadata log, each at its own pace.
func (e *env) javaUntil(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !check(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// javaTransactions: kafka-transactional-message-copier copies a topic in
// transactions of 25 records, aborting about a third of them at random
// (and then copying those records again); a read_committed
// kafka-console-consumer must see every input record exactly once.
// kafka-transactions lists and describes the transactional id.
func javaTransactions(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	// The copier keeps each record's partition: one partition in and out.
	in := e.newTopic(t, c, "in", 1)
	out := e.newTopic(t, c, "out", 1)
	const n = 500
	input := e.javaProduce(t, e.plain, in, 1, n)
	txnID := name(c, "txn")
	if !e.real {
		// kfake answers OffsetFetch for a group it has never seen with
		// GROUP_ID_NOT_FOUND (Kafka: no offsets), which the copier's
		// consumer does not survive: make the group known first.
		ctx, cancel := ctxTimeout(20 * time.Second)
		defer cancel()
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: in, Partition: 0, At: 0, LeaderEpoch: -1})
		if _, err := e.admin(t).CommitOffsets(ctx, name(c, "copier"), os); err != nil {
			t.Fatalf("commit the copier's start offset: %v", err)
		}
		c.note("the copier's group is created first (kfake answers OffsetFetch for an unknown group with GROUP_ID_NOT_FOUND)")
	}
	p := e.java(t, e.plain, nil, "kafka-transactional-message-copier", "--broker-list", e.bootstrap(),
		"--input-topic", in, "--input-partition", "0", "--output-topic", out, "--transactional-id", txnID,
		"--consumer-group", name(c, "copier"), "--max-messages", strconv.Itoa(n), "--transaction-size", "25",
		"--enable-random-aborts", "--use-group-metadata")
	if !strings.Contains(p.stdout.String(), `"remaining":0`) {
		t.Fatalf("the copier did not finish:\n%s", lastLines(p.stdout.String(), 5))
	}
	cp := e.java(t, e.plain, nil, "kafka-console-consumer", "--bootstrap-server", e.bootstrap(), "--topic", out,
		"--group", name(c, "g"), "--isolation-level", "read_committed", "--from-beginning",
		"--max-messages", strconv.Itoa(n), "--timeout-ms", "60000",
		"--formatter-property", "print.key=true", "--formatter-property", "print.partition=true",
		"--formatter-property", "print.offset=true", "--formatter-property", "key.separator=|")
	gs := parseConsole(t, cp.stdout.String())
	// Copies keep key and value; their order across output partitions is
	// the copier's, so compare as sets (checkRecords also checks order per
	// partition, which the copier keeps).
	checkRecordsIn(t, "read_committed copy", gs, asRecs(input), 1)
	all := franzDrain(t, e, out)
	c.note("%d of %d records in the output topic were in aborted transactions", len(all)-n, len(all))
	if len(all) == n {
		t.Logf("no transaction happened to be aborted: the abort check is vacuous this time")
	}

	list := e.java(t, e.plain, nil, "kafka-transactions", "--bootstrap-server", e.bootstrap(), "list").stdout.String()
	if !strings.Contains(list, txnID) {
		t.Errorf("kafka-transactions list does not list %s:\n%s", txnID, list)
	}
	desc := e.java(t, e.plain, nil, "kafka-transactions", "--bootstrap-server", e.bootstrap(), "describe", "--transactional-id", txnID).stdout.String()
	switch {
	case strings.Contains(desc, "CompleteCommit"):
	case !e.real && strings.Contains(desc, "Empty"):
		c.note("a finished transaction is described as Empty (Kafka: CompleteCommit)")
	default:
		t.Errorf("kafka-transactions describe --transactional-id %s:\n%s", txnID, desc)
	}
}

var apiVersionsBrokerRE = regexp.MustCompile(`(?m)^(\S+:\d+) \(id: (\d+) `)

// javaAddresses: the brokers kafka-broker-api-versions lists are kproxy's;
// kafka-metadata-quorum (DescribeQuorum, real Kafka) mentions no upstream
// listener; and a producer and a consumer only ever connect to kproxy
// (checked for every Java tool run, from the client's connection log).
func javaAddresses(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	out := e.java(t, e.plain, nil, "kafka-broker-api-versions", "--bootstrap-server", e.bootstrap()).stdout.String()
	ms := apiVersionsBrokerRE.FindAllStringSubmatch(out, -1)
	if len(ms) != len(e.nodes) {
		t.Errorf("kafka-broker-api-versions lists %d brokers, want %d:\n%s", len(ms), len(e.nodes), out)
	}
	for _, m := range ms {
		id, _ := strconv.Atoi(m[2])
		e.checkNodeAddr(t, e.plain, "kafka-broker-api-versions", int32(id), m[1])
	}
	if e.real {
		for _, args := range [][]string{{"describe", "--status"}, {"describe", "--replication"}} {
			p := e.java(t, e.plain, nil, "kafka-metadata-quorum", append([]string{"--bootstrap-server", e.bootstrap()}, args...)...)
			text := p.stdout.String() + p.stderr.String()
			for port := range e.ports {
				if strings.Contains(text, ":"+strconv.Itoa(port)) {
					t.Errorf("kafka-metadata-quorum %s shows the upstream port %d:\n%s", strings.Join(args, " "), port, text)
				}
			}
			if strings.Contains(text, "CONTROLLER://") {
				c.note("kafka-metadata-quorum %s shows controller endpoints: %s", args[1], firstMatch(text, `CONTROLLER://\S+`))
			}
		}
	} else {
		c.note("kafka-metadata-quorum not run: kfake has no DescribeQuorum")
	}
	topic := e.newTopic(t, c, "t", partitions)
	acked := e.javaProduce(t, e.plain, topic, 1, 1000)
	checkAcked(t, "kafka-verifiable-consumer", e.javaConsume(t, e.plain, topic, name(c, "g"), "classic", 1000), acked)
}

func firstMatch(s, re string) string { return regexp.MustCompile(re).FindString(s) }

// javaTLSSCRAM: the verifiable producer and consumer over TLS with
// SCRAM-SHA-512 (PEM truststore), and kafka-topics with the same settings.
func javaTLSSCRAM(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	acked := e.javaProduce(t, e.tlsProxy(c), topic, 1, javaRecords)
	group := name(c, "g")
	gs := e.javaConsume(t, e.tlsProxy(c), topic, group, "classic", javaRecords)
	checkAcked(t, "kafka-verifiable-consumer over TLS + SCRAM", gs, acked)
	checkRecords(t, "kafka-verifiable-consumer over TLS + SCRAM", gs, asRecs(acked))
	e.checkCommitted(t, group, topic, javaRecords)
	out := e.java(t, e.tlsProxy(c), nil, "kafka-topics", "--bootstrap-server", e.seed(e.tlsProxy(c)), "--list",
		"--command-config", e.javaProps(t, e.tlsProxy(c))).stdout.String()
	if !slices.Contains(strings.Fields(out), topic) {
		t.Errorf("kafka-topics --list over TLS + SCRAM does not list %s:\n%s", topic, out)
	}
}
