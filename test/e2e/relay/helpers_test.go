// Package e2e drives kproxy end to end: a real kfake cluster, a real kproxy
// in front of it, and franz-go clients (or raw TCP clients) whose only seed
// is kproxy's bootstrap address. Everything listens on 127.0.0.1.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// env is one test's cluster, kproxy and address sniffer.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	proxy   *kproxytest.Kproxy
	sniff   *testkit.Sniffer
}

func newEnv(t *testing.T, extraYAML string, opts ...kfake.Opt) *env {
	t.Helper()
	c := testkit.Cluster(t, 3, opts...)
	p := kproxytest.Start(t, testkit.Config{Upstream: c.ListenAddrs(), Extra: extraYAML}.YAML())
	return &env{t: t, cluster: c, proxy: p, sniff: testkit.NewSniffer()}
}

// client returns a kgo client seeded only with kproxy's bootstrap address,
// dialing through the sniffer. It is closed when the test ends.
func (e *env) client(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(e.proxy.BootstrapAddr()),
		kgo.Dialer(e.sniff.Dial),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		// A broken proxy must fail a test, not hang it: records are
		// otherwise retried forever.
		kgo.RecordDeliveryTimeout(45 * time.Second),
	}
	if lvl := os.Getenv("E2E_KGO_LOG"); lvl != "" {
		l := map[string]kgo.LogLevel{"error": kgo.LogLevelError, "warn": kgo.LogLevelWarn,
			"info": kgo.LogLevelInfo, "debug": kgo.LogLevelDebug}[lvl]
		base = append(base, kgo.WithLogger(kgo.BasicLogger(tWriter{e.t}, l, nil)))
	}
	return testkit.Client(e.t, append(base, opts...)...)
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// createTopic creates a topic through kproxy with kadm.
func (e *env) createTopic(ctx context.Context, topic string, partitions int32) {
	e.t.Helper()
	adm := kadm.NewClient(e.client())
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil {
		e.t.Fatalf("create topic %s: %v", topic, err)
	}
	if resp.Err != nil {
		e.t.Fatalf("create topic %s: %v", topic, resp.Err)
	}
	// Wait until the topic's metadata is visible through kproxy.
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == int(partitions) {
				return
			}
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("topic %s not visible: %v", topic, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkAddrs runs the sniffer's address check against this env.
func (e *env) checkAddrs() {
	e.t.Helper()
	e.sniff.CheckAddrs(e.t, e.proxy, e.cluster.ListenAddrs())
}

// rawConn is a hand-driven Kafka connection for tests that need to control
// exactly which bytes go on the wire.
type rawConn = testkit.RawConn

func dialRaw(t *testing.T, addr string) *rawConn { return testkit.DialRaw(t, addr, "e2e-raw") }

// expectClosed asserts that the server closes c within d (a read returns
// EOF or a reset, not data and not a timeout) and returns how long it took.
func expectClosed(t *testing.T, c net.Conn, d time.Duration) time.Duration {
	t.Helper()
	took, err := testkit.WaitClosed(c, d)
	if err != nil {
		t.Fatal(err)
	}
	return took
}

// produceRequest builds a Produce request of values to topic/partition.
// Versions from 13 on name topics by id; we stay at 12 or below.
// metadataRequest is a Metadata request at version for topic.
func metadataRequest(version int16, topic string) *kmsg.MetadataRequest {
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(version)
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	md.Topics = append(md.Topics, mt)
	return md
}

func produceRequest(version int16, acks int16, topic string, partition int32, values ...string) *kmsg.ProduceRequest {
	req := testkit.ProduceByName(version, acks, testkit.RecordBatch(values...), topic)
	req.Topics[0].Partitions[0].Partition = partition
	return req
}

// consumeValues reads partition p of topic from the start through kproxy
// until want values were read, and returns them in offset order.
func (e *env) consumeValues(ctx context.Context, topic string, p int32, want int) []string {
	e.t.Helper()
	cl := e.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {p: kgo.NewOffset().AtStart()},
	}))
	defer cl.Close()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			e.t.Fatalf("consumed %d of %d records of %s/%d: %v", len(got), want, topic, p, ctx.Err())
		}
		fs.EachError(func(t string, p int32, err error) { e.t.Errorf("fetch %s/%d: %v", t, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// noMoreRecords polls cl for d and fails if any record arrives.
func noMoreRecords(t *testing.T, cl *kgo.Client, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		var extra []string
		fs.EachRecord(func(r *kgo.Record) {
			extra = append(extra, fmt.Sprintf("%s/%d@%d %q", r.Topic, r.Partition, r.Offset, r.Value))
		})
		if len(extra) > 0 {
			t.Fatalf("%d unexpected extra records, first: %s", len(extra), extra[0])
		}
	}
}
