package e2epolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// sessionPolicy lets everyone read and write pub.* and nothing else.
const sessionPolicy = `
policy:
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: pub, principals: ["*"], allow: [read, write], topics: ["pub.*"]}
`

// rawFetch is a v12 consumer fetch (topics by name) with the given session
// id and epoch, of partition 0 of each topic from offset 0.
func rawFetch(sessionID, epoch int32, topics ...string) *kmsg.FetchRequest {
	r := testkit.FetchByName(12, topics...)
	r.MaxWaitMillis, r.MinBytes = 50, 1
	r.SessionID, r.SessionEpoch = sessionID, epoch
	return r
}

// fetchedRecords is every topic/partition of resp that carries record
// bytes.
func fetchedRecords(resp *kmsg.FetchResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if len(p.RecordBatches) > 0 {
				out = append(out, fmt.Sprintf("%s/%d (%d bytes)", t.Topic, p.Partition, len(p.RecordBatches)))
			}
		}
	}
	return out
}

// produceDirect writes n records with values prefix-0.. to topic, straight
// to kfake.
func (e *env) produceDirect(ctx context.Context, topic, prefix string, n int) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d", prefix, i)), Partition: int32(i % 3)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.t.Fatalf("produce to %s: %v", topic, err)
	}
}

// TestFetchSessionHijackGetsNothing: a victim reads secret.t in a fetch
// session it opened on the broker itself (kfake numbers sessions 1, 2,
// 3...). A principal that may not read secret.t sends, through kproxy, an
// incremental fetch naming no topic with that session's id and next epoch,
// and any other small id: the broker would serve the victim's partitions;
// kproxy answers FETCH_SESSION_ID_NOT_FOUND and no records.
func TestFetchSessionHijackGetsNothing(t *testing.T) {
	e := newEnv(t, 1, []string{"secret.t", "pub.t"}, sessionPolicy)
	ctx := testkit.Context(t, 30*time.Second)
	e.produceDirect(ctx, "secret.t", "secret", 9)

	victim := testkit.DialRaw(t, e.cluster.ListenAddrs()[0], "victim")
	opened := victim.MustRoundTrip(t, rawFetch(0, 0, "secret.t")).(*kmsg.FetchResponse)
	if opened.ErrorCode != 0 || opened.SessionID <= 0 || len(fetchedRecords(opened)) == 0 {
		t.Fatalf("victim's session: code %d, id %d, records %v", opened.ErrorCode, opened.SessionID, fetchedRecords(opened))
	}

	attacker := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "attacker")
	for _, id := range []int32{opened.SessionID, 1, 2, 3} {
		resp := attacker.MustRoundTrip(t, rawFetch(id, 1)).(*kmsg.FetchResponse)
		if got := fetchedRecords(resp); len(got) > 0 {
			t.Errorf("session %d epoch 1 through kproxy delivered %v to a principal that may not read them", id, got)
		}
		if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code || resp.SessionID != 0 {
			t.Errorf("session %d: code %s, session id %d; want FETCH_SESSION_ID_NOT_FOUND, 0", id, kerrName(resp.ErrorCode), resp.SessionID)
		}
	}
	// A full fetch by the attacker for the same topic is refused as ever,
	// and one for a topic it may read is served without a session.
	denied := attacker.MustRoundTrip(t, rawFetch(0, 0, "secret.t")).(*kmsg.FetchResponse)
	if len(fetchedRecords(denied)) > 0 || len(denied.Topics) != 1 || denied.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("full fetch of secret.t: %+v", denied)
	}
	e.produceDirect(ctx, "pub.t", "pub", 3)
	served := attacker.MustRoundTrip(t, rawFetch(0, 0, "pub.t")).(*kmsg.FetchResponse)
	if served.ErrorCode != 0 || served.SessionID != 0 || len(fetchedRecords(served)) != 1 {
		t.Errorf("full fetch of pub.t: code %s, session id %d (want 0: no session), records %v",
			kerrName(served.ErrorCode), served.SessionID, fetchedRecords(served))
	}
}

// consumeFor polls cl for d and returns the values it got per topic, and
// the fetch errors.
func consumeFor(ctx context.Context, cl *kgo.Client, d time.Duration) (map[string][]string, []error) {
	got := map[string][]string{}
	var errs []error
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		pctx, cancel := context.WithDeadline(ctx, end)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, fmt.Errorf("%s/%d: %w", topic, p, err))
			}
		})
		fs.EachRecord(func(r *kgo.Record) { got[r.Topic] = append(got[r.Topic], string(r.Value)) })
	}
	return got, errs
}

// consumeUntil polls cl until it has n records of topic (or fails).
func consumeUntil(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s: %v", len(got), n, topic, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == topic {
				got = append(got, string(r.Value))
			}
		})
	}
	return got
}

// TestFetchSessionEndsWhenReloadDenies: a franz-go consumer reads a topic
// while the policy allows it (a policy that allows everything, and a
// policy in audit mode that would deny it); the policy is reloaded to deny
// it; records produced afterwards never reach the consumer, which gets
// TOPIC_AUTHORIZATION_FAILED instead. Kafka re-authorizes every session
// partition on every fetch; without kproxy doing the same, the consumer's
// incremental fetches (which name no partition) keep delivering.
func TestFetchSessionEndsWhenReloadDenies(t *testing.T) {
	for name, before := range map[string]string{
		"allow to deny":    "policy: {default: allow}\n",
		"audit to enforce": strings.Replace(sessionPolicy, "policy:\n", "policy:\n  mode: audit\n", 1),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, 1, []string{"secret.t"}, before)
			ctx := testkit.Context(t, 30*time.Second)
			const maxWait = 100 * time.Millisecond
			cl := e.client("consumer", kgo.ConsumeTopics("secret.t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchMaxWait(maxWait))
			e.produceDirect(ctx, "secret.t", "before", 6)
			if got := consumeUntil(t, ctx, cl, "secret.t", 6); len(got) != 6 {
				t.Fatalf("before the reload consumed %v", got)
			}
			// The consumer's next fetches settle its session (the
			// advanced offsets are sent once); from then on an idle
			// consumer's incremental fetches name no partition, the
			// state of a long-lived consumer when a policy changes.
			time.Sleep(3 * maxWait)

			e.reload(sessionPolicy)
			// A fetch already waiting at the broker finishes under the
			// policy it started with, as in Kafka. The consumer has one
			// fetch out at a time: once one is denied, those have ended.
			if !testkit.WaitFor(10*time.Second, func() bool {
				return testkit.MetricValue(t, e.reg, "kproxy_policy_decisions_total", "decision", "deny") > 0
			}) {
				t.Fatal("no fetch denied within 10 s of the reload")
			}
			e.produceDirect(ctx, "secret.t", "after", 6)
			got, errs := consumeFor(ctx, cl, 2*time.Second)
			if len(got["secret.t"]) > 0 {
				t.Errorf("after the reload denied secret.t the consumer still got %v", got["secret.t"])
			}
			authz := false
			for _, err := range errs {
				authz = authz || errors.Is(err, kerr.TopicAuthorizationFailed)
			}
			if !authz {
				t.Errorf("fetch errors after the reload %v, want TOPIC_AUTHORIZATION_FAILED", errs)
			}
		})
	}
}

// TestConsumeThroughReadPolicyExactlyOnce: a franz-go consumer reading
// through a read policy (every fetch sessionless) gets every record once,
// while more are written during the consumption, in many small fetches.
func TestConsumeThroughReadPolicyExactlyOnce(t *testing.T) {
	e := newEnv(t, 3, []string{"pub.t", "secret.t"}, sessionPolicy)
	ctx := testkit.Context(t, 60*time.Second)
	cl := e.client("reader", kgo.ConsumeTopics("pub.t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxPartitionBytes(512), kgo.FetchMaxWait(100*time.Millisecond))
	e.produceDirect(ctx, "pub.t", "first", 150)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.produceDirect(ctx, "pub.t", "second", 150)
	}()
	got := consumeUntil(t, ctx, cl, "pub.t", 300)
	<-done
	extra, errs := consumeFor(ctx, cl, 500*time.Millisecond)
	got = append(got, extra["pub.t"]...)
	if len(errs) > 0 {
		t.Errorf("fetch errors: %v", errs)
	}
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for _, prefix := range []string{"first", "second"} {
		for i := range 150 {
			if v := fmt.Sprintf("%s-%d", prefix, i); seen[v] != 1 {
				t.Errorf("record %s consumed %d times, want once", v, seen[v])
			}
		}
	}
	if len(got) != 300 {
		t.Errorf("consumed %d records, want 300", len(got))
	}
}
