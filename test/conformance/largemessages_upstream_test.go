package conformance

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// What the large-messages scenario checks without kproxy: the upstream's
// records, the store's objects and the broker's limit.

// checkLMUpstream reads topic straight from the upstream
// (read_uncommitted: the aborted transaction's records too) and fails
// unless every small record of all is there as produced and every large
// one is a pointer of KafScale's envelope naming an object in the store of
// the record's size and SHA-256. The objects of aborted records must be
// gone from the store: kproxy deletes what a transaction it saw aborted
// had offloaded.
func (e *env) checkLMUpstream(t *testing.T, c *cellCtx, topic string, all, aborted []lmDigest) {
	t.Helper()
	stored := map[string]*kgo.Record{}
	for _, r := range e.readUpstream(t, topic, len(all)) {
		stored[string(r.Key)] = r
	}
	wasAborted := map[string]bool{}
	for _, d := range aborted {
		wasAborted[d.key] = true
	}
	largest, pointers := 0, 0
	abortedObjects := map[string]int{}
	for _, d := range all {
		r := stored[d.key]
		if r == nil {
			t.Errorf("upstream: no record %s", d.key)
			continue
		}
		if d.size <= lmThreshold {
			if sum := sha256.Sum256(r.Value); len(r.Value) != d.size || hex.EncodeToString(sum[:]) != d.sha {
				t.Errorf("upstream: the small record %s is %d bytes with another SHA-256, want it as produced (%d bytes)", d.key, len(r.Value), d.size)
			}
			continue
		}
		p, ok := checkLMPointer(t, d, r.Value)
		if !ok {
			continue
		}
		pointers++
		largest = max(largest, len(r.Value))
		if wasAborted[d.key] {
			abortedObjects[e.checkLMObjectGone(t, d.key, p.Key)]++
		} else {
			e.checkLMObject(t, d, p.Key)
		}
	}
	c.note("upstream: %d pointers of at most %d bytes (KafScale envelope) in place of the large values; the aborted transaction's objects: %v", pointers, largest, abortedObjects)
}

// checkLMPointer fails unless value is a pointer to record d's value.
func checkLMPointer(t *testing.T, d lmDigest, value []byte) (pointer.Pointer, bool) {
	t.Helper()
	if len(value) > pointer.MaxEncodedBytes || !pointer.Detect(value) {
		t.Errorf("upstream: the %d-byte record %s is stored as %d bytes that are not a pointer (starting %q)", d.size, d.key, len(value), value[:min(len(value), 60)])
		return pointer.Pointer{}, false
	}
	p, err := pointer.Decode(value)
	if err != nil {
		t.Errorf("upstream: record %s: %v", d.key, err)
		return pointer.Pointer{}, false
	}
	if p.Bucket != seaweed.Bucket || p.Size != int64(d.size) || p.SHA256 != d.sha {
		t.Errorf("upstream: record %s's pointer names %s/%s, %d bytes, SHA-256 %s; want bucket %s, %d bytes, SHA-256 %s",
			d.key, p.Bucket, p.Key, p.Size, p.SHA256, seaweed.Bucket, d.size, d.sha)
	}
	return p, true
}

// checkLMObject fails unless the store holds key with record d's size.
func (e *env) checkLMObject(t *testing.T, d lmDigest, key string) {
	t.Helper()
	head, err := e.lmStore.Admin.HeadObject(testkit.Context(t, 20*time.Second), &s3.HeadObjectInput{Bucket: aws.String(seaweed.Bucket), Key: aws.String(key)})
	if err != nil {
		t.Errorf("store: the object of record %s (%s): %v", d.key, key, err)
		return
	}
	if n := aws.ToInt64(head.ContentLength); n != int64(d.size) {
		t.Errorf("store: the object of record %s (%s) is %d bytes, want %d", d.key, key, n, d.size)
	}
}

// checkLMObjectGone fails unless key, offloaded for a record of an
// aborted transaction, leaves the store within 30 s (kproxy deletes it
// after the abort, best effort) or kproxy counted an orphan it could not
// delete (left to the bucket's lifecycle rule). It says which.
func (e *env) checkLMObjectGone(t *testing.T, recKey, key string) string {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, err = e.lmStore.Admin.HeadObject(testkit.Context(t, 20*time.Second), &s3.HeadObjectInput{Bucket: aws.String(seaweed.Bucket), Key: aws.String(key)})
		if notFound := new(types.NotFound); errors.As(err, &notFound) {
			return "deleted"
		}
	}
	if testkit.MetricValue(t, e.lm.Registry, lmOrphans, "result", "failure") > 0 {
		return "left, counted as an orphan"
	}
	t.Errorf("store: the object of the aborted record %s (%s) is still there and no orphan was counted (last HEAD: %v)", recKey, key, err)
	return "left"
}

// lmOrphans counts the objects of unacknowledged or aborted records, by
// result: deleted (success) or left (failure).
const lmOrphans = "kproxy_large_messages_orphans_total"

// checkBrokerLimit fails unless the upstream's brokers and topic keep
// Kafka's default message.max.bytes and refuse a 5 MiB record produced
// to them directly: only offloading let the scenario's records through.
func (e *env) checkBrokerLimit(t *testing.T, topic string) {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(e.upstream...), kgo.ProducerBatchMaxBytes(8<<20), kgo.RecordRetries(1))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want := strconv.Itoa(brokerMessageMaxBytes)
	brokers, err := adm.DescribeBrokerConfigs(ctx, e.nodes...)
	if err != nil {
		t.Fatalf("describe the upstream's broker configs: %v", err)
	}
	for _, rc := range brokers {
		if v := configValue(rc.Configs, "message.max.bytes"); v != want {
			t.Errorf("broker %s has message.max.bytes %q, want the default %s", rc.Name, v, want)
		}
	}
	topics, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	rc, err := topics.On(topic, nil)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	if v := configValue(rc.Configs, "max.message.bytes"); v != want {
		t.Errorf("%s has max.message.bytes %q, want the default %s", topic, v, want)
	}
	value := make([]byte, 5<<20)
	rand.Read(value) // incompressible: franz-go compresses batches by default
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("direct-5MiB"), Value: value}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Errorf("a 5 MiB record produced straight to the upstream: %v, want MESSAGE_TOO_LARGE", err)
	}
}
