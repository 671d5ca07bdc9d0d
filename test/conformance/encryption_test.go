package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// The encryption scenario: each client produces records with headers
// through a kproxy that encrypts values and header values (a KEK in
// local-kms), with every compression codec it supports, and reads them
// back through it; franz-go, straight to the upstream, finds no plaintext.

const scenarioEncryption = "encryption"

// encRecordsPerCodec is how many records each client writes per codec:
// enough for a batch of several records, few to keep the cell short.
const encRecordsPerCodec = 3

// encCodecs are the codecs every client of the scenario produces with.
var encCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// encKEK is the alias of the key-encryption key the scenario's topics use.
const encKEK = "alias/kproxy-conformance"

// encHeader is one record header as produced and consumed.
type encHeader struct{ key, value string }

// encRec is one record of the scenario. Values are unique to a record and
// header values to a client and codec (kcat gives every record of a run
// the same headers), so a scan of the upstream can look for each.
type encRec struct {
	key, value string
	headers    []encHeader
}

// encRecs makes the records a client produces with codec.
func encRecs(c *cellCtx, codec string) []encRec {
	secret := fmt.Sprintf("plaintext-%s-%s-%s", c.key.client, codec, runID)
	rs := make([]encRec, encRecordsPerCodec)
	for i := range rs {
		rs[i] = encRec{
			key:   fmt.Sprintf("k-%s-%d", codec, i),
			value: fmt.Sprintf("value-%s-%d", secret, i),
			headers: []encHeader{
				{"trace-id", "header-a-" + secret},
				{"source", "header-b-" + secret},
			},
		}
	}
	return rs
}

// startEncryption starts local-kms with the scenario's KEK and a kproxy
// encrypting the scenario's topics in front of the upstream. Without the
// local-kms binary (outside CI) the cells skip.
func (e *env) startEncryption(t *testing.T) {
	t.Helper()
	if os.Getenv(localkms.BinEnv) == "" && os.Getenv("CI") == "" {
		e.encSkip = localkms.BinEnv + " is not set: build local-kms with `cd test/localkms && go build -o DIR/local-kms .`"
		return
	}
	kms := localkms.Start(t)
	kms.CreateAlias(encKEK, kms.CreateKey())
	e.enc = kproxytest.Start(t, testkit.Config{Upstream: e.upstream, Extra: fmt.Sprintf(`
encryption:
  kms:
    aws_kms: {endpoint: %q, region: %s}
  topics:
    - match: "conf-*-%s-*"
      key: %q
      encrypt: [value, headers]
`, kms.Endpoint(), localkms.Region, scenarioEncryption, encKEK)}.YAML())
}

// encRoundTrip is the scenario for one client: produce records with
// produce (through the encrypting kproxy at addr) with each codec into one
// topic, read them all back with consume, compare, and scan the upstream.
func encRoundTrip(t *testing.T, c *cellCtx, e *env,
	produce func(t *testing.T, addr, topic, codec string, rs []encRec),
	consume func(t *testing.T, addr, topic string, n int) []encRec) {
	t.Helper()
	if e.encSkip != "" {
		skipCell(t, c, e.encSkip)
	}
	topic := e.newTopic(t, c, "t", 1)
	var want []encRec
	for _, codec := range encCodecs {
		rs := encRecs(c, codec)
		produce(t, e.enc.BootstrapAddr(), topic, codec, rs)
		want = append(want, rs...)
	}
	got := consume(t, e.enc.BootstrapAddr(), topic, len(want))
	checkEncRecords(t, got, want)
	e.checkNoPlaintext(t, topic, want)
	c.note("codecs %s, %d records with 2 headers each", strings.Join(encCodecs, ", "), len(want))
}

// checkEncRecords fails unless got is want, in order (one partition),
// headers included.
func checkEncRecords(t *testing.T, got, want []encRec) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("consumed %d records through kproxy, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.key != w.key || g.value != w.value || !slices.Equal(g.headers, w.headers) {
			t.Errorf("record %d through kproxy: %+v, want %+v", i, g, w)
		}
	}
}

// checkNoPlaintext reads topic straight from the upstream with franz-go
// and fails if any value or header value of rs appears in any record's
// value or header values (decompressed): the upstream must hold only
// ciphertext. Keys stay in the clear and are not scanned.
func (e *env) checkNoPlaintext(t *testing.T, topic string, rs []encRec) {
	t.Helper()
	stored := e.readUpstream(t, topic, len(rs))
	secrets := map[string]bool{}
	for _, r := range rs {
		secrets[r.value] = true
		for _, h := range r.headers {
			secrets[h.value] = true
		}
	}
	for s := range secrets {
		for _, r := range stored {
			if holds(r, []byte(s)) {
				t.Errorf("the upstream record at offset %d holds the plaintext %q", r.Offset, s)
				break
			}
		}
	}
}

// holds says whether r's value or a header value contains s.
func holds(r *kgo.Record, s []byte) bool {
	if bytes.Contains(r.Value, s) {
		return true
	}
	for _, h := range r.Headers {
		if bytes.Contains(h.Value, s) {
			return true
		}
	}
	return false
}

// readUpstream reads the first n records of topic straight from the
// upstream, without kproxy.
func (e *env) readUpstream(t *testing.T, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(e.upstream...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for len(rs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records straight from the upstream: %v", len(rs), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d from the upstream: %v", topic, p, err) })
		rs = append(rs, fs.Records()...)
	}
	return rs
}

// encCompactedTombstone: in a compacted topic a tombstone produced
// through the encrypting kproxy stays null upstream, so that compaction
// deletes its key, while the record before it is ciphertext.
func encCompactedTombstone(t *testing.T, c *cellCtx, e *env) {
	t.Helper()
	topic := name(c, "compacted")
	adm := e.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	policy := "compact"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &policy}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create compacted topic %s: %v", topic, err)
	}
	e.mu.Lock()
	e.topics = append(e.topics, topic)
	e.mu.Unlock()
	e.waitTopic(t, ctx, adm, topic, 1)
	e.waitTopicOnEveryBroker(t, ctx, topic, 1)
	e.checkCleanupPolicy(t, adm, topic)

	cl := testkit.Client(t, kgo.SeedBrokers(e.enc.BootstrapAddr()))
	secret := "value-compacted-" + runID
	rs := []*kgo.Record{
		{Topic: topic, Key: []byte("k"), Value: []byte(secret)},
		{Topic: topic, Key: []byte("k"), Value: nil},
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce a record and its tombstone through kproxy: %v", err)
	}
	stored := e.readUpstream(t, topic, 2)
	if bytes.Contains(stored[0].Value, []byte(secret)) {
		t.Errorf("compacted topic: the upstream holds the plaintext %q", secret)
	}
	if stored[1].Value != nil {
		t.Errorf("compacted topic: the tombstone is %d bytes upstream, want null", len(stored[1].Value))
	}
	c.note("compacted topic: the tombstone stays null upstream")
}

// checkCleanupPolicy fails unless topic is compacted upstream.
func (e *env) checkCleanupPolicy(t *testing.T, adm *kadm.Client, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	if v := configValue(rc.Configs, "cleanup.policy"); v != "compact" {
		t.Fatalf("%s has cleanup.policy %q, want compact", topic, v)
	}
}

// setKMSCredentials gives kproxy, which runs in the test process and reads
// its AWS credentials from the environment as in production, the ones
// local-kms accepts, unless the environment has some. Set once before any
// test runs: the cells run in parallel, where t.Setenv is not allowed.
func setKMSCredentials() {
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" {
		return
	}
	os.Setenv("AWS_ACCESS_KEY_ID", "kproxy-test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "kproxy-test-secret")
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}
