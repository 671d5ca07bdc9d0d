package conformance

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	register("kcat", "produce-consume", kcatProduceConsume)
	register("kcat", "resume", kcatResume)
	register("kcat", "transactions", kcatTransactions)
	register("kcat", "addresses", kcatAddresses)
	register("kcat", "tls-scram", kcatTLSSCRAM)
	register("kcat", "sni", kcatTLSSCRAM)
}

func requireKcat(t *testing.T, c *cellCtx) {
	t.Helper()
	if _, err := exec.LookPath("kcat"); err != nil {
		skipCell(t, c, "kcat is not on PATH (apt-get install kcat)")
	}
}

// kcat runs kcat with args, checks that every connection it made went to
// kproxy px, and returns its standard output.
func (e *env) kcat(t *testing.T, px *kproxytest.Kproxy, stdin []byte, args ...string) []byte {
	t.Helper()
	// debug=broker: librdkafka logs every connection it makes, which
	// checkSockets reads (a short kcat run can slip between samples).
	p := run(t, 120*time.Second, stdin, nil, "kcat", append(args, "-X", "debug=broker")...)
	e.checkSockets(t, px, p)
	return []byte(p.stdout.String())
}

func kcatInput(rs []rec) []byte {
	var b bytes.Buffer
	for _, r := range rs {
		b.WriteString(r.key + ":" + r.value + "\n")
	}
	return b.Bytes()
}

// kcatFormat prints partition, offset, key and value.
const kcatFormat = `%p:%o:%k:%s\n`

func parseKcat(t *testing.T, out []byte) []got {
	t.Helper()
	var gs []got
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, ":", 4)
		if len(f) != 4 {
			t.Fatalf("kcat printed %q, want partition:offset:key:value", line)
		}
		p, err1 := strconv.Atoi(f[0])
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("kcat printed %q", line)
		}
		gs = append(gs, got{int32(p), o, f[2], f[3]})
	}
	return gs
}

var kcatProduce = []string{"-P", "-K:", "-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5"}

// kcatGroup runs a balanced consumer group until the end of every
// partition (-e) and returns what it read.
func (e *env) kcatGroup(t *testing.T, group, topic string) []got {
	t.Helper()
	return parseKcat(t, e.kcat(t, e.plain, nil, "-b", e.bootstrap(), "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-f", kcatFormat, topic))
}

func kcatProduceConsume(t *testing.T, c *cellCtx, e *env) {
	requireKcat(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	want := makeRecs("kcat", goRecords)
	e.kcat(t, e.plain, kcatInput(want), append([]string{"-b", e.bootstrap(), "-t", topic}, kcatProduce...)...)
	group := name(c, "g")
	checkRecords(t, "kcat -G", e.kcatGroup(t, group, topic), want)
	e.checkCommitted(t, group, topic, int64(len(want)))
	// And the simple consumer (-C, no group) from the beginning.
	checkRecords(t, "kcat -C", parseKcat(t, e.kcat(t, e.plain, nil, "-b", e.bootstrap(), "-C", "-t", topic, "-o", "beginning", "-e", "-f", kcatFormat)), want)
}

func kcatResume(t *testing.T, c *cellCtx, e *env) {
	requireKcat(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	first := makeRecs("first", goRecords)
	e.kcat(t, e.plain, kcatInput(first), append([]string{"-b", e.bootstrap(), "-t", topic}, kcatProduce...)...)
	checkRecords(t, "first run", e.kcatGroup(t, group, topic), first)
	e.checkCommitted(t, group, topic, int64(len(first)))
	second := makeRecs("second", 300)
	e.kcat(t, e.plain, kcatInput(second), append([]string{"-b", e.bootstrap(), "-t", topic}, kcatProduce...)...)
	checkRecords(t, "second run (from the commits)", e.kcatGroup(t, group, topic), second)
	e.checkCommitted(t, group, topic, int64(len(first)+len(second)))
}

// kcatTransactions: kcat commits a transaction (-X transactional.id: all
// of stdin in one transaction, committed at EOF), franz-go aborts one,
// kcat commits another; kcat's read_committed consumer sees exactly the
// two committed ones.
func kcatTransactions(t *testing.T, c *cellCtx, e *env) {
	requireKcat(t, c)
	topic := e.newTopic(t, c, "t", 3)
	txn := []string{"-b", e.bootstrap(), "-t", topic, "-P", "-K:", "-X", "transactional.id=" + name(c, "txn"), "-m", "30"}
	var b txnBatches
	first := makeRecsFrom("commit", 0, 300)
	e.kcat(t, e.plain, kcatInput(first), txn...)
	ab := makeRecsFrom("abort", 300, 300)
	fr := e.kgoClient(t, kgo.TransactionalID(name(c, "franz-txn")))
	if err := fr.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	franzProduceNoWait(t, fr, topic, ab)
	endTxn(t, fr, false)
	second := makeRecsFrom("commit", 600, 300)
	e.kcat(t, e.plain, kcatInput(second), txn...)
	b.committed = append(first, second...)
	b.aborted = ab
	out := e.kcat(t, e.plain, nil, "-b", e.bootstrap(), "-C", "-t", topic, "-o", "beginning", "-e", "-X", "isolation.level=read_committed", "-f", kcatFormat)
	checkReadCommitted(t, "kcat read_committed", parseKcat(t, out), b)
	e.checkTxnWritten(t, topic, b)
}

// kcatAddresses: every broker in kcat -L -J is kproxy's, and kcat only
// ever connected to kproxy (checked for every kcat run).
func kcatAddresses(t *testing.T, c *cellCtx, e *env) {
	requireKcat(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	var md struct {
		OriginatingBroker struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"originating_broker"`
		Brokers []struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []struct {
			Topic      string `json:"topic"`
			Partitions []struct {
				Leader int32 `json:"leader"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	out := e.kcat(t, e.plain, nil, "-b", e.bootstrap(), "-L", "-J", "-m", "30")
	if err := json.Unmarshal(out, &md); err != nil {
		t.Fatalf("kcat -L -J: %v\n%s", err, out)
	}
	if len(md.Brokers) != len(e.nodes) {
		t.Errorf("kcat -L lists %d brokers, want %d", len(md.Brokers), len(e.nodes))
	}
	for _, b := range md.Brokers {
		e.checkNodeAddr(t, e.plain, "kcat -L broker", b.ID, b.Name)
	}
	if name, _, _ := strings.Cut(md.OriginatingBroker.Name, "/"); name != "" {
		e.checkAddr(t, e.plain, "kcat -L originating broker", name, true)
	}
	found := false
	for _, tp := range md.Topics {
		if tp.Topic == topic {
			found = len(tp.Partitions) == partitions
		}
	}
	if !found {
		t.Errorf("kcat -L does not list %s with %d partitions", topic, partitions)
	}
	want := makeRecs("addr", 200)
	e.kcat(t, e.plain, kcatInput(want), append([]string{"-b", e.bootstrap(), "-t", topic}, kcatProduce...)...)
	checkRecords(t, "kcat -G", e.kcatGroup(t, name(c, "g"), topic), want)
}

func kcatTLSSCRAM(t *testing.T, c *cellCtx, e *env) {
	requireKcat(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	sec := []string{"-b", e.seed(e.tlsProxy(c)), "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + e.pki.CAFile,
		"-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=" + saslUser, "-X", "sasl.password=" + saslPass}
	want := makeRecs("tls", goRecords)
	e.kcat(t, e.tlsProxy(c), kcatInput(want), append(append(sec, "-t", topic), kcatProduce...)...)
	group := name(c, "g")
	out := e.kcat(t, e.tlsProxy(c), nil, append(sec, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-f", kcatFormat, topic)...)
	checkRecords(t, "kcat -G over TLS + SCRAM-SHA-512", parseKcat(t, out), want)
	e.checkCommitted(t, group, topic, int64(len(want)))
}
