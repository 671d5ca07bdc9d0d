package e2epolicy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/policy"
)

// TestConcurrentProducesKeepEveryDecisionIntact: kproxy reads produce
// requests into reused buffers, and the policy's decisions, split-request
// answers and asynchronously written audit lines all name topics by strings
// decoded from those buffers. Many producers pipelining mixed allowed and
// denied topics must still get every answer right, put exactly the allowed
// records on the cluster, and leave an audit log whose every line names a
// real topic with the decision that topic gets.
func TestConcurrentProducesKeepEveryDecisionIntact(t *testing.T) {
	const (
		producers = 4
		perTopic  = 120 // records per producer per topic
	)
	var allowed, denied []string
	for i := range 6 {
		allowed = append(allowed, fmt.Sprintf("allowed.reuse-%d", i))
		denied = append(denied, fmt.Sprintf("denied.reuse-%d", i))
	}
	topics := append(append([]string(nil), allowed...), denied...)
	topics = topics[:len(topics):len(topics)]
	e := newEnforcerEnv(t, 2, topics, producePolicy+"audit: {log_allowed: true, buffer_size: 1000000}\n")
	// Audit lines are written well after their decisions, as to a slow
	// disk: by then the request they came from is long gone.
	e.audit.SetWriteDelay(200 * time.Microsecond)
	ctx := testkit.Context(t, 60*time.Second)
	// What the cluster received, per topic: every allow line must match a
	// topic in a request that reached it. Produce v13 names topics by id.
	details, err := e.direct().ListTopics(ctx, topics...)
	if err != nil {
		t.Fatal(err)
	}
	names := map[[16]byte]string{}
	for _, d := range details {
		names[d.ID] = d.Topic
	}
	var mu sync.Mutex
	received := map[string]int{}
	e.cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		for _, tp := range req.(*kmsg.ProduceRequest).Topics {
			if tp.Topic == "" {
				tp.Topic = names[tp.TopicID]
			}
			received[tp.Topic]++
		}
		return nil, nil, false
	})

	var wg sync.WaitGroup
	errs := make(chan error, producers*len(topics)*perTopic)
	for p := range producers {
		// Half the producers write only allowed topics: their requests go
		// through whole, so their buffers are reused at once. Half mix in
		// denied ones: split requests, whose buffers stay with the response
		// hook that merges the denials into the broker's answer.
		mine := allowed
		if p%2 == 1 {
			mine = topics
		}
		// Small batches and no linger make thousands of requests, and
		// several goroutines per client keep requests pipelined on each
		// connection: a buffer reused too early holds the next request.
		opts := []kgo.Opt{kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(2048), kgo.RecordRetries(1)}
		if p%2 == 1 { // mixes in denied topics
			// An idempotent producer answered TOPIC_AUTHORIZATION_FAILED
			// bumps its epoch, and its batches in flight under the old
			// one come back INVALID_PRODUCER_EPOCH and are retried: on a
			// slow machine twice, past RecordRetries(1), which is there
			// so that a wrong retriable answer from kproxy is not hidden.
			// Plain acks=all writes keep one try per record, pipelined.
			opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(5))
		}
		if p < 2 {
			// Produce v12 names topics in the request; v13 uses ids, which
			// kproxy resolves from its own map.
			opts = append(opts, kgo.MaxVersions(kversion.V4_0_0()))
		}
		cl := e.client(fmt.Sprintf("e2e-reuse-%d", p), opts...)
		const workers = 6
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Round by round, one record per topic, so that denied
				// topics keep appearing in requests.
				for i := w; i < perTopic; i += workers {
					var round sync.WaitGroup
					for _, topic := range mine {
						round.Add(1)
						value := []byte(strings.Repeat("v", 200+i%300))
						cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
							defer round.Done()
							wantDenied := strings.HasPrefix(r.Topic, "denied.")
							switch {
							case wantDenied && !errors.Is(err, kerr.TopicAuthorizationFailed):
								errs <- fmt.Errorf("record to %s: %v, want TOPIC_AUTHORIZATION_FAILED", r.Topic, err)
							case !wantDenied && err != nil:
								errs <- fmt.Errorf("record to %s: %w", r.Topic, err)
							}
						})
					}
					round.Wait()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 10 {
			t.Error(err)
		}
	}
	if n > 10 {
		t.Errorf("... and %d more record errors", n-10)
	}

	for _, topic := range topics {
		var total int64
		for part := range int32(3) {
			total += e.endOffset(ctx, topic, part)
		}
		want := int64(producers * perTopic)
		if strings.HasPrefix(topic, "denied.") {
			want = 0
		}
		if total != want {
			t.Errorf("%s holds %d records on the cluster, want %d", topic, total, want)
		}
	}

	decisions := map[string]map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(e.auditLines()))
	for sc.Scan() {
		var line map[string]string
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if line["api"] != "Produce" {
			continue
		}
		if decisions[line["resource"]] == nil {
			decisions[line["resource"]] = map[string]int{}
		}
		decisions[line["resource"]][line["decision"]]++
	}
	for resource, byDecision := range decisions {
		want := ""
		switch {
		case strings.HasPrefix(resource, "allowed.reuse-"):
			want = policy.DecisionAllow
		case strings.HasPrefix(resource, "denied.reuse-"):
			want = policy.DecisionDeny
		}
		if want == "" || len(byDecision) != 1 || byDecision[want] == 0 {
			t.Errorf("audit lines for resource %q: %v (a name or decision not from the request)", resource, byDecision)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, topic := range allowed {
		if got, want := decisions[topic][policy.DecisionAllow], received[topic]; got != want || want == 0 {
			t.Errorf("%s: %d audit lines allow it, the cluster received it in %d requests", topic, got, want)
		}
	}
	for _, topic := range denied {
		if decisions[topic][policy.DecisionDeny] == 0 || received[topic] != 0 {
			t.Errorf("%s: %d audit lines deny it, the cluster received it in %d requests", topic, decisions[topic][policy.DecisionDeny], received[topic])
		}
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_audit_dropped_total"); n != 0 {
		t.Errorf("%v audit lines dropped: the queue is sized to hold them all", n)
	}
}

// renameTopic is a filter that changes a Produce request without
// a response hook: it moves the records for one topic to another, whose
// name is longer, so the re-encoded request is laid out differently from
// the frame it was decoded from.
type renameTopic struct{ from, to string }

func (f renameTopic) Register(r *filter.Registry) { filter.OnRequest(r, f.produce) }

func (f renameTopic) produce(_ *filter.Conn, r *kmsg.ProduceRequest) filter.Verdict {
	modified := false
	for i := range r.Topics {
		if r.Topics[i].Topic == f.from {
			r.Topics[i].Topic, modified = f.to, true
		}
	}
	return filter.Verdict{Modified: modified}
}

// TestRewrittenRequestIsEncodedFromAnIntactFrame: a request a filter
// changed is re-encoded from the decoded request, which aliases the frame
// it was read into; that frame may go back to the pool only after the
// encoding, or the new request is written over the bytes it is read from.
func TestRewrittenRequestIsEncodedFromAnIntactFrame(t *testing.T) {
	const from, to = "r", "renamed-by-a-filter-to-a-much-longer-topic-name"
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, to))
	px := kproxytest.Start(t, testkit.Config{Upstream: c.ListenAddrs()}.YAML(), kproxytest.WithFilters(renameTopic{from, to}))
	raw := testkit.DialRaw(t, px.BootstrapAddr(), "e2e-rename")
	for i := range 20 {
		if got := produceCodes(raw.MustRoundTrip(t, produceRequest(-1, from))); got != to+"=0" {
			t.Fatalf("produce %d answered %q, want %s=0", i, got, to)
		}
	}
	e := &env{t: t, cluster: c}
	if got := e.endOffset(testkit.Context(t, 10*time.Second), to, 0); got != 20 {
		t.Errorf("%s/0 end offset %d, want the 20 records produced", to, got)
	}
}
