package e2equotas

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// A greedy consumer against the fetch quota, with raw fetches: Kafka's
// semantics are that the quota belongs to the principal across all its
// connections, and that a fetch arriving while the principal is over it
// is answered with no records and the throttle time (KafkaApis'
// getThrottledResponse), whichever connection it comes on.

// greedyPolicy: erin may fetch 3 kB/s with Kafka's windows (11 of 1 s):
// 30 kB before the first throttle. A fetch (greedyFetch) answers about
// 49 kB, so the first takes her over for several seconds:
// the checks after it run well within that throttle, with no timing to
// race.
const greedyPolicy = `
policy:
  quotas:
    - {name: erin-fetch, principals: ["User:erin"], fetch_bytes_per_second: 3000}
`

// greedyFetchVersion is a Fetch version with sessions, topics by name and
// KIP-219 throttling (the client backs off itself: no delayed response).
const greedyFetchVersion = 12

// greedyEnv seeds topic's partition 0 with 150 kB and returns the env
// and the kproxy address of the partition's leader.
func greedyEnv(t *testing.T, topic string) (*env, string) {
	t.Helper()
	e := newEnv(t, []string{topic}, greedyPolicy)
	greedySeed(t, e, topic)
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(9)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, rt)
	resp := e.rawAs("erin", "greedy").MustRoundTrip(t, meta).(*kmsg.MetadataResponse)
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.Partition != 0 {
				continue
			}
			for _, b := range resp.Brokers {
				if b.NodeID == p.Leader {
					return e, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
				}
			}
		}
	}
	t.Fatalf("no leader of %s/0 in %+v", topic, resp)
	return nil, ""
}

// greedySeed writes 150 kB to partition 0 of topic, in batches of at
// most 64 kB (a fetch answers at least one).
func greedySeed(t *testing.T, e *env, topic string) {
	t.Helper()
	cl := e.direct(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(maxRequestBytes))
	ctx := testkit.Context(t, 30*time.Second)
	value := randomValue()
	for i := 0; i < 150_000/valueSize; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: value, Partition: 0}).FirstErr(); err != nil {
			t.Fatalf("seed %s: %v", topic, err)
		}
	}
}

// greedyConn is a connection of erin to addr, authenticated.
func (e *env) greedyConn(addr string) *testkit.RawConn {
	e.t.Helper()
	c := testkit.DialRaw(e.t, addr, "greedy")
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	if resp, err := c.RoundTrip(hs); err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		e.t.Fatalf("SASL handshake: %v %+v", err, resp)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SetVersion(2)
	auth.SASLAuthBytes = []byte("\x00erin\x00erin-secret")
	if resp, err := c.RoundTrip(auth); err != nil || resp.(*kmsg.SASLAuthenticateResponse).ErrorCode != 0 {
		e.t.Fatalf("SASL PLAIN: %v %+v", err, resp)
	}
	return c
}

// greedyFetch is a sessionless fetch of topic's partition 0 from offset 0,
// of at most 64000 bytes: three of greedySeed's batches, about 49 kB,
// which take erin over her quota for about 6 s.
func greedyFetch(topic string) *kmsg.FetchRequest {
	req := testkit.FetchByName(greedyFetchVersion, topic)
	req.MaxBytes, req.Topics[0].Partitions[0].PartitionMaxBytes = 64000, 64000
	return req
}

// recordBytes is how many record bytes resp carries, and a description.
func recordBytes(resp *kmsg.FetchResponse) (int, string) {
	n := 0
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			n += len(p.RecordBatches)
		}
	}
	return n, fmt.Sprintf("error %d, session %d, throttle %d ms, %d topics, %d record bytes",
		resp.ErrorCode, resp.SessionID, resp.ThrottleMillis, len(resp.Topics), n)
}

// wantThrottledEmpty fails unless resp is a broker's answer to a fetch
// while over quota: no error, no partitions, a throttle time.
func wantThrottledEmpty(t *testing.T, what string, resp *kmsg.FetchResponse, sessionID int32) {
	t.Helper()
	_, desc := recordBytes(resp)
	if resp.ErrorCode != 0 || len(resp.Topics) != 0 || resp.ThrottleMillis <= 0 || resp.SessionID != sessionID {
		t.Errorf("%s: %s; want no error, no topics, a throttle, session %d", what, desc, sessionID)
	}
}

// TestFetchQuotaHoldsAcrossReconnects: once a fetch took the principal
// over its quota, a fetch on a new connection gets no records and the
// throttle time, and so does one on another connection already open.
func TestFetchQuotaHoldsAcrossReconnects(t *testing.T) {
	t.Parallel()
	e, leader := greedyEnv(t, "greedy.reconnect")
	other := e.greedyConn(leader) // open before the quota is exceeded
	first := e.greedyConn(leader).MustRoundTrip(t, greedyFetch("greedy.reconnect")).(*kmsg.FetchResponse)
	if n, desc := recordBytes(first); n == 0 || first.ThrottleMillis <= 0 {
		t.Fatalf("first fetch: %s; want the records and a throttle", desc)
	}
	for i := 0; i < 3; i++ {
		resp := e.greedyConn(leader).MustRoundTrip(t, greedyFetch("greedy.reconnect")).(*kmsg.FetchResponse)
		wantThrottledEmpty(t, fmt.Sprintf("fetch on new connection %d", i+1), resp, 0)
	}
	wantThrottledEmpty(t, "fetch on a connection opened before", other.MustRoundTrip(t, greedyFetch("greedy.reconnect")).(*kmsg.FetchResponse), 0)
}

// TestFetchQuotaHoldsPipelinedFetches: of 10 fetches written before any
// response is read, the first delivers the records and a throttle time;
// the connection is then muted, as a broker mutes a throttled client's
// channel, so no further records come on it before that throttle time
// has passed (the next fetches wait, as a broker reads a muted
// connection's next request only once the throttle is over).
func TestFetchQuotaHoldsPipelinedFetches(t *testing.T) {
	t.Parallel()
	e, leader := greedyEnv(t, "greedy.pipeline")
	c := e.greedyConn(leader)
	req := greedyFetch("greedy.pipeline")
	corrs, err := c.SendPipelined(req, 10)
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := c.Receive(req, corrs[0])
	if err != nil {
		t.Fatal(err)
	}
	first := resp.(*kmsg.FetchResponse)
	throttled := time.Now().Add(time.Duration(first.ThrottleMillis) * time.Millisecond)
	if n, desc := recordBytes(first); n == 0 || first.ThrottleMillis <= 0 {
		t.Fatalf("first fetch: %s; want records and a throttle", desc)
	}
	// Whatever comes before the throttle is over must carry no records.
	// (A loaded machine only delays responses: it cannot make this pass.)
	for i, corr := range corrs[1:] {
		if err := c.SetReadDeadline(throttled); err != nil {
			t.Fatal(err)
		}
		frame, err := testkit.ReadFrame(c)
		if err != nil {
			break // nothing more before the throttle's end: as wanted
		}
		resp, err := testkit.DecodeResponse(req, corr, frame)
		if err != nil {
			t.Fatalf("pipelined fetch %d: %v", i+2, err)
		}
		if n, desc := recordBytes(resp.(*kmsg.FetchResponse)); n > 0 && time.Now().Before(throttled) {
			t.Fatalf("pipelined fetch %d delivered records %v before the first's throttle of %d ms was over: %s",
				i+2, time.Until(throttled).Round(time.Millisecond), first.ThrottleMillis, desc)
		}
	}
}

// TestFetchQuotaHoldsParallelConnections: 8 connections fetching at once
// deliver the records once between them.
func TestFetchQuotaHoldsParallelConnections(t *testing.T) {
	t.Parallel()
	e, leader := greedyEnv(t, "greedy.parallel")
	var conns []*testkit.RawConn
	for i := 0; i < 8; i++ {
		conns = append(conns, e.greedyConn(leader))
	}
	var mu sync.Mutex
	delivered := 0
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.RoundTrip(greedyFetch("greedy.parallel"))
			if err != nil {
				t.Errorf("connection %d: %v", i, err)
				return
			}
			if n, _ := recordBytes(resp.(*kmsg.FetchResponse)); n > 0 {
				mu.Lock()
				delivered++
				mu.Unlock()
				return
			}
			wantThrottledEmpty(t, fmt.Sprintf("connection %d", i), resp.(*kmsg.FetchResponse), 0)
		}()
	}
	wg.Wait()
	if delivered != 1 {
		t.Errorf("%d of 8 parallel fetches delivered records; want 1", delivered)
	}
}

// TestFetchQuotaKeepsTheSession: an incremental fetch of a session that
// arrives while the principal is over quota (another of its connections
// took it over) is answered empty with the session id, and the session
// stays in step with the broker's: the broker saw that fetch (its epoch
// advanced with the client's), so the next incremental fetch is not
// refused as out of step. A full fetch while over quota creates no
// session and is answered with none.
func TestFetchQuotaKeepsTheSession(t *testing.T) {
	t.Parallel()
	e, leader := greedyEnv(t, "greedy.session")
	ctx := testkit.Context(t, 10*time.Second)
	ends, err := kadm.NewClient(e.direct()).ListEndOffsets(ctx, "greedy.session")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("greedy.session", 0)
	// A session at the end of the log: nothing to fetch yet.
	c := e.greedyConn(leader)
	full := greedyFetch("greedy.session")
	full.SessionEpoch = 0
	full.Topics[0].Partitions[0].FetchOffset = end.Offset
	resp := c.MustRoundTrip(t, full).(*kmsg.FetchResponse)
	if n, desc := recordBytes(resp); n != 0 || resp.SessionID == 0 || resp.ThrottleMillis != 0 {
		t.Fatalf("full fetch at the end: %s; want a session, no records, no throttle", desc)
	}
	session := resp.SessionID
	if first := e.greedyConn(leader).MustRoundTrip(t, greedyFetch("greedy.session")).(*kmsg.FetchResponse); first.ThrottleMillis <= 0 {
		_, desc := recordBytes(first)
		t.Fatalf("fetch from the start on another connection: %s; want the principal over its quota", desc)
	}
	inc := greedyFetch("greedy.session")
	inc.SessionID, inc.SessionEpoch, inc.Topics = session, 1, nil
	throttled := c.MustRoundTrip(t, inc).(*kmsg.FetchResponse)
	wantThrottledEmpty(t, "incremental fetch while over quota", throttled, session)
	again := greedyFetch("greedy.session")
	again.SessionEpoch = 0
	wantThrottledEmpty(t, "full fetch while over quota", e.greedyConn(leader).MustRoundTrip(t, again).(*kmsg.FetchResponse), 0)
	// The next epoch, once the throttle is over, as a client backs off.
	time.Sleep(time.Duration(throttled.ThrottleMillis) * time.Millisecond)
	inc.SessionEpoch = 2
	if resp := c.MustRoundTrip(t, inc).(*kmsg.FetchResponse); resp.ErrorCode != 0 {
		t.Errorf("incremental fetch, epoch 2: error %d; want the broker's session in step with the client's", resp.ErrorCode)
	}
}
