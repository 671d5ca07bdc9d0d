package engine_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// rawClient speaks the Kafka wire protocol over one connection, one request
// at a time unless the test pipelines by hand; every failure but a closed
// connection fails the test.
type rawClient struct {
	*testkit.RawConn
	t *testing.T
}

func dialRaw(t *testing.T, addr string) *rawClient {
	return &rawClient{RawConn: testkit.DialRaw(t, addr, "raw"), t: t}
}

func (c *rawClient) send(req kmsg.Request) int32 {
	c.t.Helper()
	corr, err := c.Send(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return corr
}

// recvRaw is recv for a response that must arrive: it also returns the
// frame's bytes.
func (c *rawClient) recvRaw(req kmsg.Request, corr int32) ([]byte, kmsg.Response) {
	c.t.Helper()
	frame, resp, err := c.Receive(req, corr)
	if err != nil {
		c.t.Fatal(err)
	}
	return frame, resp
}

// recv reads one response to req, sent with correlation id corr. Only the
// connection's errors are returned: a response that is not req's answer
// fails the test.
func (c *rawClient) recv(req kmsg.Request, corr int32) (kmsg.Response, error) {
	c.t.Helper()
	_, resp, err := c.Receive(req, corr)
	if errors.Is(err, testkit.ErrBadResponse) {
		c.t.Fatal(err)
	}
	return resp, err
}

// expectClosed asserts the connection is closed by kproxy within d.
func (c *rawClient) expectClosed(d time.Duration) {
	c.t.Helper()
	if _, err := testkit.WaitClosed(c, d); err != nil {
		c.t.Fatal(err)
	}
}

func longPollFetch(topic string, wait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11) // topic names, not ids
	req.MaxWaitMillis = int32(wait.Milliseconds())
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	part := kmsg.NewFetchRequestTopicPartition()
	part.PartitionMaxBytes = 1 << 20
	part.CurrentLeaderEpoch = -1
	req.Topics = []kmsg.FetchRequestTopic{{Topic: topic, Partitions: []kmsg.FetchRequestTopicPartition{part}}}
	return req
}

func TestShutdownAnswersInFlightRequestsThenCloses(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "quiet"))
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	addr, ok := p.BrokerAddr(0)
	if !ok {
		t.Fatal("no listener for node 0")
	}
	c := dialRaw(t, addr)
	fetch := longPollFetch("quiet", 1500*time.Millisecond)
	corr := c.send(fetch)
	// Shutdown must find the fetch forwarded, parked upstream.
	if !testkit.WaitFor(5*time.Second, func() bool { return testkit.MetricValue(t, p.Registry, "kproxy_requests_in_flight") == 1 }) {
		t.Fatal("the fetch never counted as in flight")
	}

	start := time.Now()
	shutdownDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shutdownDone <- p.Shutdown(ctx)
	}()

	resp, err := c.recv(fetch, corr)
	if err != nil {
		t.Fatalf("in-flight fetch lost at shutdown: %v", err)
	}
	if got := resp.(*kmsg.FetchResponse).Topics; len(got) != 1 || got[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch answered with %+v", got)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("fetch answered after %s: shutdown cut the long poll short", waited)
	}
	c.expectClosed(5 * time.Second)
	if err := <-shutdownDone; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("a new connection was accepted after shutdown")
	}
}

func TestIdleConnectionIsClosedButLongPollIsNot(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "quiet"))
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs(), Extra: "limits: {idle_timeout: 300ms}"}.YAML()})
	addr, _ := p.BrokerAddr(0)

	idle := dialRaw(t, p.BootstrapAddr())
	idle.expectClosed(3 * time.Second)

	// A fetch parked for longer than the idle timeout keeps its pair.
	busy := dialRaw(t, addr)
	fetch := longPollFetch("quiet", time.Second)
	corr := busy.send(fetch)
	if _, err := busy.recv(fetch, corr); err != nil {
		t.Fatalf("long poll longer than idle_timeout was cut: %v", err)
	}
	busy.expectClosed(3 * time.Second) // and then idleness closes it

	closed := testkit.MetricValue(t, p.Registry, "kproxy_connections_closed_total", "reason", "idle_timeout")
	if closed < 2 {
		t.Errorf("kproxy_connections_closed_total{reason=idle_timeout} = %v, want 2", closed)
	}
}

func TestNewerApiVersionsIsAnsweredInV0Layout(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	c := dialRaw(t, p.BootstrapAddr())

	// A version newer than kmsg knows, as the first request on the
	// connection: kproxy answers UNSUPPORTED_VERSION in the v0 layout.
	newer := kmsg.NewPtrApiVersionsRequest()
	newer.SetVersion(protocol.MaxVersion(wire.APIVersionsKey) + 1)
	newer.ClientSoftwareName, newer.ClientSoftwareVersion = "raw", "1"
	corr := c.send(newer)
	v0 := kmsg.NewPtrApiVersionsRequest()
	v0.SetVersion(0)
	resp, err := c.recv(v0, corr)
	if err != nil {
		t.Fatal(err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != wire.ErrCodeUnsupportedVersion {
		t.Fatalf("error code %d, want UNSUPPORTED_VERSION", av.ErrorCode)
	}
	if len(av.ApiKeys) != 1 || av.ApiKeys[0].MaxVersion != protocol.MaxVersion(wire.APIVersionsKey) {
		t.Fatalf("fallback lists %+v, want ApiVersions up to v%d", av.ApiKeys, protocol.MaxVersion(wire.APIVersionsKey))
	}

	// The retry at a supported version gets the upstream's list, clamped.
	retry := kmsg.NewPtrApiVersionsRequest()
	retry.SetVersion(3)
	retry.ClientSoftwareName, retry.ClientSoftwareVersion = "raw", "1"
	corr = c.send(retry)
	resp, err = c.recv(retry, corr)
	if err != nil {
		t.Fatal(err)
	}
	keys := resp.(*kmsg.ApiVersionsResponse).ApiKeys
	if len(keys) < 10 {
		t.Fatalf("only %d API keys advertised", len(keys))
	}
	for _, k := range keys {
		if !protocol.KnownAPI(k.ApiKey) || k.MaxVersion > protocol.MaxVersion(k.ApiKey) {
			t.Errorf("advertised %s up to v%d, beyond what kproxy decodes (v%d)", protocol.APIName(k.ApiKey), k.MaxVersion, protocol.MaxVersion(k.ApiKey))
		}
	}
}

// misnumberingUpstream answers every request with the wrong correlation id.
func misnumberingUpstream(t *testing.T) string {
	return tcppeer.Serve(t, func(conn net.Conn) {
		var hdr [12]byte
		for {
			if _, err := io.ReadFull(conn, hdr[:]); err != nil {
				return
			}
			io.CopyN(io.Discard, conn, int64(binary.BigEndian.Uint32(hdr[:]))-8)
			corr := binary.BigEndian.Uint32(hdr[8:])
			conn.Write(binary.BigEndian.AppendUint32([]byte{0, 0, 0, 6}, corr+1))
			conn.Write([]byte{0, 0})
		}
	})
}

func TestCorrelationMismatchClosesOnlyThatPair(t *testing.T) {
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: []string{misnumberingUpstream(t)}, DialTimeout: time.Second}.YAML(), Unready: true})
	c := dialRaw(t, p.BootstrapAddr())
	req := kmsg.NewPtrListGroupsRequest()
	c.send(req)
	c.expectClosed(5 * time.Second)
	if got := testkit.MetricValue(t, p.Registry, "kproxy_connections_closed_total", "reason", "protocol_error"); got != 1 {
		t.Errorf("kproxy_connections_closed_total{reason=protocol_error} = %v, want 1", got)
	}
}
