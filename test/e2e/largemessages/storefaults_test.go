package e2elargemessages

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// A value above 4 MiB is read from the store twice: once to check it,
// once streamed to the consumer. These tests put a proxy between kproxy
// and SeaweedFS that spoils the second read of one object, as a store
// whose object changed, or stalled, after the first read would.

// storeFault is what faultyStore does to the second GET of an object.
type storeFault int32

const (
	passThrough storeFault = iota
	flipAByte              // the same length, one byte changed mid-object
	stallMidway            // the first MiB, then nothing until the request ends
)

// faultyStore is an HTTP proxy in front of the store: requests pass as
// they are (their signatures name the proxy's host, which it keeps), and
// the body of every object's second GET gets the current fault.
type faultyStore struct {
	fault atomic.Int32
	mu    sync.Mutex
	gets  map[string]int
}

func startFaultyStore(t *testing.T, endpoint string) (*faultyStore, string) {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultyStore{gets: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		req := resp.Request
		if req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/lfs/") {
			return nil
		}
		fs.mu.Lock()
		fs.gets[req.URL.Path]++
		nth := fs.gets[req.URL.Path]
		fs.mu.Unlock()
		if nth == 2 {
			resp.Body = &spoiled{body: resp.Body, fault: storeFault(fs.fault.Load()), done: req.Context().Done()}
		}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return fs, srv.URL
}

// spoiled is a body with fault applied past its first MiB.
type spoiled struct {
	body  io.ReadCloser
	fault storeFault
	done  <-chan struct{}
	n     int
}

func (s *spoiled) Read(b []byte) (int, error) {
	const at = 1 << 20
	if s.fault == stallMidway && s.n >= at {
		<-s.done // until kproxy gives up on the request
		return 0, errors.New("stalled")
	}
	if s.n < at {
		b = b[:min(len(b), at-s.n)] // stop at the first MiB, to act there
	}
	n, err := s.body.Read(b)
	if s.fault == flipAByte && s.n <= at && at < s.n+n {
		b[at-s.n] ^= 0xff
	}
	s.n += n
	return n, err
}

func (s *spoiled) Close() error { return s.body.Close() }

// TestSecondReadSpoiledClosesTheConsumer: when the streamed read of a
// value does not match what the first read checked (the object changed)
// or stops (the store stalls), kproxy closes that consumer's connection,
// counting and logging why, so no wrong or partial value is delivered as
// a whole one; other clients are served meanwhile, and once the store
// behaves the value is fetched whole.
func TestSecondReadSpoiledClosesTheConsumer(t *testing.T) {
	store := seaweed.Start(t)
	creds, err := seaweed.Credentials().Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	faults, endpoint := startFaultyStore(t, store.Endpoint())
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "media.flip", "media.stall", "plain.small"))
	sections := strings.ReplaceAll(section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""), "ENDPOINT", endpoint)
	text := testkit.Config{Upstream: cluster.ListenAddrs(), Admin: true, Log: "{level: info, format: json}", Extra: sections}.YAML()
	kp := testkit.RunBinary(t, testkit.SharedKproxy(t), testkit.WriteConfig(t, text))
	e := &env{t: t, cluster: cluster, store: store, kp: kp}
	ctx := e.ctx()
	sent := map[string][]byte{"media.flip": value(11, 6<<20+3), "media.stall": value(12, 6<<20+5)}
	for topic, v := range sent {
		if err := e.proxied().ProduceSync(ctx, &kgo.Record{Topic: topic, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func(topic string) (*kmsg.FetchResponse, error) {
		req := testkit.FetchByName(12, topic)
		req.MaxBytes, req.Topics[0].Partitions[0].PartitionMaxBytes = 16<<20, 16<<20
		resp, err := testkit.DialRaw(t, kp.Bootstrap, "spoiled-"+topic).RoundTrip(req)
		if err != nil {
			return nil, err
		}
		return resp.(*kmsg.FetchResponse), nil
	}

	faults.fault.Store(int32(flipAByte))
	if resp, err := fetch("media.flip"); err == nil {
		t.Fatalf("the object changed between the reads, and the consumer got a whole response (%d partitions)", len(resp.Topics[0].Partitions))
	}
	if got := e.metric(`kproxy_large_messages_failures_total{operation="resolve",partition="0",reason="changed_while_streaming",topic="media.flip"}`); got != 1 {
		t.Errorf("changed_while_streaming failures = %v, want 1", got)
	}

	faults.fault.Store(int32(stallMidway))
	start := time.Now()
	stalled := make(chan error, 1)
	go func() {
		_, err := fetch("media.stall")
		stalled <- err
	}()
	small := e.proxied(kgo.ConsumeTopics("plain.small"), kgo.FetchMaxWait(100*time.Millisecond))
	if err := small.ProduceSync(ctx, &kgo.Record{Topic: "plain.small", Value: []byte("meanwhile")}).FirstErr(); err != nil {
		t.Fatalf("another client's produce while a value stalls: %v", err)
	}
	testkit.Consume(t, ctx, small, 1)
	if err := <-stalled; err == nil {
		t.Fatal("the store stalled midway, and the consumer got a whole response")
	}
	if took := time.Since(start); took < 10*time.Second {
		t.Errorf("the stalled consumer was cut off after %v, before the store had been silent 15 s", took)
	}

	faults.fault.Store(int32(passThrough))
	for topic, v := range sent {
		resp, err := fetch(topic) // the third GET: faults touch only the second
		if err != nil {
			t.Fatalf("%s once the store behaves: %v", topic, err)
		}
		fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: topic}, &resp.Topics[0].Partitions[0], kgo.DefaultDecompressor(), nil)
		if fp.Err != nil || len(fp.Records) != 1 || digest(fp.Records[0].Value) != digest(v) {
			t.Errorf("%s once the store behaves: %d records (%v), want the value sent", topic, len(fp.Records), fp.Err)
		}
	}
}
