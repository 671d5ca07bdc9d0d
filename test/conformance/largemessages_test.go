package conformance

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// The large-messages scenario: each client produces small records and
// records of 5, 50 and 500 MiB interleaved on one partition through a
// kproxy that offloads values over 1 MiB to SeaweedFS (a real S3 server)
// and resolves the pointers on fetch: first with an idempotent producer,
// then in three transactions (committed, aborted, committed). Through
// kproxy the client reads every record back byte-identical (SHA-256, its
// header included) and read_committed sees exactly the committed ones;
// franz-go, straight at the upstream, finds a pointer of KafScale's
// envelope in place of every large value, whose broker still has its
// default message.max.bytes. Each client uses the settings that
// docs/large-messages.md ("Client settings") gives for records this large.

const scenarioLargeMessages = "large-messages"

const (
	// lmThreshold is the scenario's threshold_bytes: larger values are
	// offloaded.
	lmThreshold = 1 << 20
	// lmSmallBytes is the size of a small record, kept in the log as it is.
	lmSmallBytes = 1000
	// lmRequestBytes is what the clients allow one request or response
	// to carry: the largest record, 500 MiB, and its batch's framing.
	lmRequestBytes = 600 << 20
	// lmHeader is the header every record carries, its key as value: it
	// must come back with the resolved value.
	lmHeader = "lm-key"
	// brokerMessageMaxBytes is Kafka's (and kfake's) default
	// message.max.bytes, which the scenario leaves as it is.
	brokerMessageMaxBytes = 1048588
)

// lmSizes are the sizes of the idempotent producer's records, in order,
// the largest being largest. It is left out under the race detector: it
// slows hashing, copying and the in-process kfake and kproxy many times
// over on CI's two cores. CI's conformance runs without it (the real
// cluster's, then kfake's large-messages cells again) have it.
func lmSizes(largest int) []int {
	sizes := []int{lmSmallBytes, 5 << 20, lmSmallBytes, 50 << 20, lmSmallBytes}
	if !raceEnabled {
		sizes = append(sizes, largest, lmSmallBytes)
	}
	return sizes
}

// lmLargest is the largest record a client produces.
const lmLargest = 500 << 20

// lmTxnSizes are the sizes of each transaction's records.
var lmTxnSizes = []int{lmSmallBytes, 5 << 20}

// lmSpec is one record to produce: its key and value size. Its value is
// random bytes the client makes; the client reports their SHA-256.
type lmSpec struct {
	key  string
	size int
}

// lmBatch is a run of records: end is "" for the idempotent producer,
// else "commit" or "abort", how the transaction holding them ends.
type lmBatch struct {
	end  string
	recs []lmSpec
}

// lmDigest is a record as a client produced or consumed it: key, value
// size, the value's SHA-256 (hex) and, consumed, its headers ("k=v,k=v").
type lmDigest struct {
	key, sha, headers string
	size              int
}

// lmClient drives one client for the scenario.
type lmClient struct {
	// produce produces plan to topic through e.lm, transactional with
	// txnID if set, and returns what it produced, in order.
	produce func(t *testing.T, topic, txnID string, plan []lmBatch) []lmDigest
	// consume reads the first n records of topic (one partition) from the
	// beginning through e.lm.
	consume func(t *testing.T, topic string, n int, readCommitted bool) []lmDigest
	// largest is the largest record produced; 0 means lmLargest.
	largest int
}

// lmName names a record by position and size: "03-50MiB".
func lmName(i, size int) string {
	if size >= 1<<20 {
		return fmt.Sprintf("%02d-%dMiB", i, size>>20)
	}
	return fmt.Sprintf("%02d-%dB", i, size)
}

// lmIdempotentPlan is the idempotent producer's one batch.
func lmIdempotentPlan(largest int) []lmBatch {
	var b lmBatch
	for i, size := range lmSizes(largest) {
		b.recs = append(b.recs, lmSpec{"idem-" + lmName(i, size), size})
	}
	return []lmBatch{b}
}

// lmTxnPlan is three transactions: committed, aborted, committed. The
// second commit makes a read_committed consumer read past the aborted one.
func lmTxnPlan() []lmBatch {
	var plan []lmBatch
	for i, end := range []string{"commit", "abort", "commit"} {
		b := lmBatch{end: end}
		for j, size := range lmTxnSizes {
			b.recs = append(b.recs, lmSpec{fmt.Sprintf("txn%d-%s-%s", i, end, lmName(j, size)), size})
		}
		plan = append(plan, b)
	}
	return plan
}

// lmPlanText is plan as the external clients read it on stdin: a line
// "KEY SIZE" per record, and "commit" or "abort" after a transaction's.
func lmPlanText(plan []lmBatch) []byte {
	var b strings.Builder
	for _, batch := range plan {
		for _, r := range batch.recs {
			fmt.Fprintf(&b, "%s %d\n", r.key, r.size)
		}
		if batch.end != "" {
			b.WriteString(batch.end + "\n")
		}
	}
	return []byte(b.String())
}

// parseLMDigests reads what an external client printed, a line per
// record: "KEY SIZE SHA256", consumed ones followed by " HEADERS".
func parseLMDigests(t *testing.T, who, out string) []lmDigest {
	t.Helper()
	var ds []lmDigest
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 && len(f) != 4 {
			t.Fatalf("%s printed %q, want KEY SIZE SHA256 [HEADERS]", who, line)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("%s printed %q: size: %v", who, line, err)
		}
		d := lmDigest{key: f[0], size: n, sha: f[2]}
		if len(f) == 4 {
			d.headers = f[3]
		}
		ds = append(ds, d)
	}
	return ds
}

// startLargeMessages starts SeaweedFS and a kproxy offloading the
// scenario's topics to it. Without the weed binary (outside CI) the cells
// skip; a kproxy that does not start fails them.
func (e *env) startLargeMessages(t *testing.T) {
	t.Helper()
	if os.Getenv(seaweed.BinEnv) == "" && os.Getenv("CI") == "" {
		e.lmSkip = seaweed.BinEnv + " is not set: build SeaweedFS's weed with test/seaweedfs/build.sh and point " + seaweed.BinEnv + " at the path it prints"
		return
	}
	e.lmStore = seaweed.Start(t)
	// Frames up to 640 MiB (a 500 MiB record's produce request and its
	// resolved fetch response), and room for two of those cells at once.
	e.lm, e.lmErr = kproxytest.TryStart(t, testkit.Config{Upstream: e.upstream, Extra: fmt.Sprintf(`
limits:
  max_frame_bytes: %d
  max_buffered_bytes: %d
large_messages:
  store:
    s3: {endpoint: %q, bucket: %s, region: %s, path_style: true}
  topics:
    - match: "conf-*-%s-*"
      threshold_bytes: %d
  resolve_on_fetch: true
  pointer_format: kafscale
`, 640<<20, int64(3)<<30, e.lmStore.Endpoint(), seaweed.Bucket, seaweed.Region, scenarioLargeMessages, lmThreshold)}.YAML())
}

// lmRoundTrip is the scenario for one client.
func lmRoundTrip(t *testing.T, c *cellCtx, e *env, cl lmClient) {
	t.Helper()
	if e.lmSkip != "" {
		skipCell(t, c, e.lmSkip)
	}
	if e.lmErr != nil {
		t.Fatalf("kproxy with large_messages does not start: %v", e.lmErr)
	}
	topic := e.newTopic(t, c, "t", 1)
	largest := cl.largest
	if largest == 0 {
		largest = lmLargest
	}

	start := time.Now()
	idem := lmIdempotentPlan(largest)
	produced := cl.produce(t, topic, "", idem)
	checkLMProduced(t, produced, idem)
	tProduce := time.Since(start)
	got := cl.consume(t, topic, len(produced), false)
	checkLMConsumed(t, "consumed through kproxy", got, produced)
	tIdem := time.Since(start)

	start = time.Now()
	txns := lmTxnPlan()
	txnProduced := cl.produce(t, topic, name(c, "txn"), txns)
	checkLMProduced(t, txnProduced, txns)
	committed := append(append([]lmDigest(nil), produced...), lmEnded(txns, txnProduced, "commit")...)
	got = cl.consume(t, topic, len(committed), true)
	checkLMConsumed(t, "consumed read_committed through kproxy", got, committed)
	tTxn := time.Since(start)

	all := append(append([]lmDigest(nil), produced...), txnProduced...)
	aborted := lmEnded(txns, txnProduced, "abort")
	e.checkLMUpstream(t, c, topic, all, aborted)
	e.checkBrokerLimit(t, topic)
	sizes := make([]string, len(lmSizes(largest)))
	for i, s := range lmSizes(largest) {
		sizes[i] = strings.TrimPrefix(lmName(0, s), "00-")
	}
	c.note("idempotent: %s interleaved (produce %.0fs, with consume %.0fs); transactions of %d records committed, aborted, committed, read_committed (%.0fs)",
		strings.Join(sizes, ", "), tProduce.Seconds(), tIdem.Seconds(), len(lmTxnSizes), tTxn.Seconds())
	if raceEnabled {
		c.note("no %d MiB record under the race detector (the run without it has one)", largest>>20)
	}
}

// lmEnded is what was produced in plan's transactions that ended with end.
func lmEnded(plan []lmBatch, produced []lmDigest, end string) []lmDigest {
	keys := map[string]bool{}
	for _, b := range plan {
		if b.end == end {
			for _, r := range b.recs {
				keys[r.key] = true
			}
		}
	}
	var out []lmDigest
	for _, d := range produced {
		if keys[d.key] {
			out = append(out, d)
		}
	}
	return out
}

// checkLMProduced fails unless the client produced plan's records, in
// order, with their sizes.
func checkLMProduced(t *testing.T, produced []lmDigest, plan []lmBatch) {
	t.Helper()
	var want []lmSpec
	for _, b := range plan {
		want = append(want, b.recs...)
	}
	if len(produced) != len(want) {
		t.Fatalf("the client produced %d records, want %d: %+v", len(produced), len(want), produced)
	}
	for i, w := range want {
		if p := produced[i]; p.key != w.key || p.size != w.size || len(p.sha) != 64 {
			t.Fatalf("record %d produced as %+v, want key %s and %d bytes", i, p, w.key, w.size)
		}
	}
}

// checkLMConsumed fails unless got is want, in order: same keys, sizes,
// SHA-256 and the one header.
func checkLMConsumed(t *testing.T, what string, got, want []lmDigest) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.key != w.key || g.size != w.size || g.sha != w.sha {
			t.Errorf("%s: record %d is %s (%d bytes, SHA-256 %s), want %s (%d bytes, SHA-256 %s)", what, i, g.key, g.size, g.sha, w.key, w.size, w.sha)
		}
		if wantH := lmHeader + "=" + w.key; g.headers != wantH {
			t.Errorf("%s: record %s has headers %q, want %q", what, g.key, g.headers, wantH)
		}
	}
}
