package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

const topic = "orders"

// startExample runs the example program in this process in front of
// cluster and returns its bootstrap address.
func startExample(t *testing.T, cluster *kfake.Cluster) string {
	t.Helper()
	cfg := testkit.WriteConfig(t, testkit.LocalConfig(cluster.ListenAddrs()[0])+"require_header: {name: trace-id}\n")
	var stderr bytes.Buffer
	kp := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		if err := run(ctx, []string{"--config", cfg}, log, &stderr); err != nil {
			return fmt.Errorf("%w: %s", err, stderr.String())
		}
		return nil
	})
	kp.WaitReady()
	return kp.Bootstrap
}

func record(partition int32, value string, traced bool) *kgo.Record {
	r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte(value)}
	if traced {
		r.Headers = []kgo.RecordHeader{{Key: "trace-id", Value: []byte("t-" + value)}}
	}
	return r
}

// TestRequireHeaderEndToEnd: a franz-go producer (idempotent, as by
// default) writes through the example's kproxy. Records with the header
// are stored; records without are refused with INVALID_RECORD, also when
// they share a request with accepted ones, and never reach the cluster.
func TestRequireHeaderEndToEnd(t *testing.T) {
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(2, topic))
	bootstrap := startExample(t, cluster)
	producer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	steps := []struct {
		records []*kgo.Record
		refused []bool // per record: want INVALID_RECORD
	}{
		{[]*kgo.Record{record(0, "traced-1", true)}, []bool{false}},
		{[]*kgo.Record{record(0, "untraced-1", false)}, []bool{true}},
		// One request, two partitions: one stored, one refused.
		{[]*kgo.Record{record(0, "traced-2", true), record(1, "untraced-2", false)}, []bool{false, true}},
		// A refused record fails its whole batch, as on a broker.
		{[]*kgo.Record{record(1, "traced-in-refused-batch", true), record(1, "untraced-3", false)}, []bool{true, true}},
		// After refusals the producer goes on (its sequence numbers recover).
		{[]*kgo.Record{record(0, "traced-3", true), record(1, "traced-4", true)}, []bool{false, false}},
	}
	var stored []string
	for i, step := range steps {
		// ProduceSync lists results as the promises finish, not in the
		// order given: partitions on different brokers finish in any order.
		wantRefused := make(map[*kgo.Record]bool, len(step.records))
		for j, r := range step.records {
			wantRefused[r] = step.refused[j]
		}
		results := producer.ProduceSync(ctx, step.records...)
		if len(results) != len(step.records) {
			t.Fatalf("step %d: %d results for %d records", i, len(results), len(step.records))
		}
		for _, r := range results {
			refused := errors.Is(r.Err, kerr.InvalidRecord)
			if want := wantRefused[r.Record]; refused != want || (!refused && r.Err != nil) {
				t.Errorf("step %d record %q: err %v, want refused %v", i, r.Record.Value, r.Err, want)
			}
			if r.Err == nil {
				stored = append(stored, string(r.Record.Value))
			}
		}
	}

	// Straight from the cluster: exactly the accepted records.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var inCluster []string
	for len(inCluster) < len(stored) && ctx.Err() == nil {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) { inCluster = append(inCluster, string(r.Value)) })
	}
	ends, err := kadm.NewClient(consumer).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var written int64
	ends.Each(func(o kadm.ListedOffset) { written += o.Offset })
	if written != int64(len(stored)) {
		t.Errorf("the cluster holds %d records, %d were acknowledged", written, len(stored))
	}
	slices.Sort(stored)
	slices.Sort(inCluster)
	if want := []string{"traced-1", "traced-2", "traced-3", "traced-4"}; !slices.Equal(stored, want) || !slices.Equal(inCluster, want) {
		t.Errorf("acknowledged %q, in the cluster %q; want %q", stored, inCluster, want)
	}
}
