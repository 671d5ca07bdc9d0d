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

// encClient is one client's part in the encryption scenario. A client
// without a capability leaves its function nil and says why in its note.
type encClient struct {
	// produce writes rs with codec into topic through the encrypting
	// kproxy at addr; consume reads n records of topic back through it.
	produce func(t *testing.T, addr, topic, codec string, rs []encRec)
	consume func(t *testing.T, addr, topic string, n int) []encRec
	// idempotent: produce has idempotence on, so every batch it writes
	// carries a producer id upstream (checked; without it, none does).
	idempotent bool
	// tombstone writes key=value, then key's tombstone (a null value),
	// into the compacted topic through the encrypting kproxy at addr.
	tombstone func(t *testing.T, addr, topic, key, value string)
	// readNullable reads the first n records of topic back through the
	// encrypting kproxy at addr with the client's consumer, telling a null
	// value from an empty one.
	readNullable func(t *testing.T, addr, topic string, n int) []encNullable
	// txn writes three transactions into topic through the encrypting
	// kproxy at addr (commit, abort, commit); readCommitted, if set, reads
	// n records of topic with the client's own read_committed consumer.
	txn           func(t *testing.T, c *cellCtx, addr, topic string) txnBatches
	readCommitted func(t *testing.T, addr, topic string, n int) []got
	// txnNote says whose producer wrote the transactions, or why the
	// client has none.
	txnNote string
}

// encScenario runs the scenario's checks for one client, each a subtest
// so that one failing does not hide the others: every codec with headers,
// a compacted topic's tombstone, and transactions.
func encScenario(t *testing.T, c *cellCtx, e *env, cl encClient) {
	t.Helper()
	if e.encSkip != "" {
		skipCell(t, c, e.encSkip)
	}
	t.Run("codecs", func(t *testing.T) { encRoundTrip(t, c, e, cl) })
	t.Run("tombstone", func(t *testing.T) { encCompactedTombstone(t, c, e, cl) })
	if cl.txn == nil {
		c.note("no transactions: %s", cl.txnNote)
		return
	}
	t.Run("transactions", func(t *testing.T) { encTransactions(t, c, e, cl) })
}

// encRoundTrip produces records with each codec into one topic through
// the encrypting kproxy, reads them all back through it, compares, and
// scans the upstream: no plaintext, and a producer id on every batch
// exactly when the producer is idempotent.
func encRoundTrip(t *testing.T, c *cellCtx, e *env, cl encClient) {
	topic := e.newTopic(t, c, "t", 1)
	var want []encRec
	for _, codec := range encCodecs {
		rs := encRecs(c, codec)
		cl.produce(t, e.enc.BootstrapAddr(), topic, codec, rs)
		want = append(want, rs...)
	}
	got := cl.consume(t, e.enc.BootstrapAddr(), topic, len(want))
	checkEncRecords(t, got, want)
	stored := e.checkNoPlaintext(t, topic, want)
	c.note("codecs %s, %d records with 2 headers each", strings.Join(encCodecs, ", "), len(want))
	for _, r := range stored {
		if idempotent := r.ProducerID >= 0; idempotent != cl.idempotent {
			t.Errorf("the upstream record at offset %d has producer id %d; want an idempotent producer's: %v", r.Offset, r.ProducerID, cl.idempotent)
			break
		}
	}
	if cl.idempotent {
		c.note("idempotent producer: every batch keeps its producer id upstream")
	} else {
		c.note("not idempotent: the producer sends no producer id (checked upstream)")
	}
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
// ciphertext. Keys stay in the clear and are not scanned. It returns the
// upstream's records.
func (e *env) checkNoPlaintext(t *testing.T, topic string, rs []encRec) []*kgo.Record {
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
	return stored
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
	return readRecords(t, e.upstream, "straight from the upstream", topic, n)
}

// readRecords reads the first n records of topic from seeds (where, in
// its failures) with franz-go, which tells a null value from an empty one.
func readRecords(t *testing.T, seeds []string, where, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for len(rs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records %s: %v", len(rs), n, where, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d %s: %v", topic, p, where, err) })
		rs = append(rs, fs.Records()...)
	}
	return rs
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
