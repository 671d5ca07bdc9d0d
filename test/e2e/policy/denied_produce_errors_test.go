package e2epolicy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// deniedProducePolicy lets everyone write t, describe every topic and
// produce idempotently, and nothing else: writes to secret are denied.
const deniedProducePolicy = `
policy:
  rules:
    - {name: writers, principals: ["*"], allow: [write], topics: ["t"]}
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: cluster, principals: ["*"], allow: [idempotent_write], cluster: true}
`

// TestBinaryDeniedProduceCountsEachPartition runs the real kproxy binary
// in front of kfake; a franz-go producer writes one record to each of
// secret's 3 partitions, which the policy denies. Produce has no
// top-level error code, only one per partition, so
// kproxy_response_errors_total{api="Produce",error="TOPIC_AUTHORIZATION_FAILED"}
// must count 3, one per denied partition (it counted 0 when only
// top-level codes counted). The audit lines' decision is the decision
// label's value of kproxy_policy_decisions_total.
func TestBinaryDeniedProduceCountsEachPartition(t *testing.T) {
	const partitions = 3
	bin := testkit.KproxyBinary(t)
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(partitions, "t", "secret"))
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	cfg := testkit.Config{Upstream: cluster.ListenAddrs(), Admin: true, Log: "{level: info, format: json}",
		Extra: fmt.Sprintf("audit: {output: %q}\n", auditPath) + deniedProducePolicy}.YAML()
	kp := testkit.RunBinary(t, bin, testkit.WriteConfig(t, cfg))
	kp.WaitReady()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var records []*kgo.Record
	for p := range int32(partitions) {
		records = append(records, &kgo.Record{Topic: "secret", Partition: p, Value: []byte("v")})
	}
	for _, r := range cl.ProduceSync(ctx, records...) {
		if !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("produce to secret/%d: %v, want TOPIC_AUTHORIZATION_FAILED", r.Record.Partition, r.Err)
		}
	}

	series := `kproxy_response_errors_total{api="Produce",error="TOPIC_AUTHORIZATION_FAILED"}`
	if got, _ := testkit.ScrapeSeries(t, kp.Admin, series); got != partitions {
		t.Errorf("%s = %v, want %d: one per denied partition", series, got, partitions)
	}

	// The audit lines are written in the background: wait for the first.
	var lines []map[string]string
	testkit.WaitFor(10*time.Second, func() bool {
		data, _ := os.ReadFile(auditPath) // not there until the first line
		var audit logbuf.Buffer
		audit.Write(data)
		lines = logbuf.JSONLines[map[string]string](t, &audit)
		return len(lines) > 0
	})
	if len(lines) == 0 {
		t.Fatal("no audit line for the denied produce")
	}
	for _, l := range lines {
		decision := fmt.Sprintf(`kproxy_policy_decisions_total{decision=%q}`, l["decision"])
		if got, ok := testkit.ScrapeSeries(t, kp.Admin, decision); !ok || got == 0 {
			t.Errorf("audit line with decision %q (resource %s), but %s = %v", l["decision"], l["resource"], decision, got)
		}
	}
}
