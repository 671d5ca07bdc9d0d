package e2epolicy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// binaryReadDenied lets everyone write and describe t but not read it.
const binaryReadDenied = `
policy:
  MODE
  rules:
    - {name: writers, principals: ["*"], allow: [write, describe], topics: ["t"]}
    - {name: cluster, principals: ["*"], allow: [idempotent_write, describe], cluster: true}
`

// TestBinaryFetchSessionEndsAtAuditToEnforce runs the real kproxy binary
// with a policy in audit mode that would deny reading t; a franz-go
// consumer reads t (audit forwards) and goes idle; the file switches the
// policy to enforce; records produced afterwards must not reach the
// consumer, which gets TOPIC_AUTHORIZATION_FAILED. Without kproxy
// re-deciding every fetched partition, the consumer's fetch session keeps
// delivering them.
func TestBinaryFetchSessionEndsAtAuditToEnforce(t *testing.T) {
	bin := testkit.KproxyBinary(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "kproxy.yaml")
	write := func(mode string) {
		t.Helper()
		body := strings.Replace(binaryBase, "AUDIT", filepath.Join(dir, "audit.log"), 1) +
			strings.Replace(binaryReadDenied, "MODE", "mode: "+mode, 1)
		if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("audit")
	kp := testkit.RunBinary(t, bin, cfgPath)
	kp.WaitReady()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	producer, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	produce := func(prefix string) {
		t.Helper()
		for i := range 3 {
			if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	const maxWait = 100 * time.Millisecond
	consumer, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(maxWait),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()

	produce("audit")
	if got := consumeUntil(t, ctx, consumer, "t", 3); len(got) != 3 {
		t.Fatalf("under audit mode consumed %v", got)
	}
	time.Sleep(3 * maxWait) // the consumer goes idle: its fetches name no partition

	write("enforce")
	kp.WaitLog("reload on file change", testkit.MessagePrefix("policy reloaded"))
	// Fetches waiting at the broker finish under the old policy. The
	// consumer has one fetch out at a time: once one is denied, those
	// have ended.
	if !testkit.WaitFor(10*time.Second, func() bool {
		denied, _ := testkit.ScrapeSeries(t, kp.Admin, `kproxy_policy_decisions_total{decision="deny"}`)
		return denied > 0
	}) {
		t.Fatal("no fetch denied within 10 s of the reload")
	}
	produce("enforce")
	got, errs := consumeFor(ctx, consumer, 2*time.Second)
	if len(got["t"]) > 0 {
		t.Errorf("after audit -> enforce the consumer still got %v", got["t"])
	}
	authz := false
	for _, err := range errs {
		authz = authz || errors.Is(err, kerr.TopicAuthorizationFailed)
	}
	if !authz {
		t.Errorf("fetch errors after the switch %v, want TOPIC_AUTHORIZATION_FAILED", errs)
	}
	if _, err := kp.Stop(); err != nil {
		t.Errorf("kproxy exited with %v", err)
	}
}
