package conformance

import (
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"
)

// confluentThrottles is what the script's throttle_cb saw.
type confluentThrottles struct {
	Events  int64 `json:"throttle_events"`
	TotalMS int64 `json:"throttle_total_ms"`
	MaxMS   int64 `json:"throttle_max_ms"`
}

// check fails t unless librdkafka's throttle callback was called.
func (th confluentThrottles) check(t *testing.T, c *cellCtx, what string) {
	t.Helper()
	if th.Events == 0 {
		t.Errorf("%s: librdkafka's throttle_cb was never called", what)
		return
	}
	c.note("%s: throttle_cb %d times, %d ms in all, at most %d ms", what, th.Events, th.TotalMS, th.MaxMS)
}

// confluentQuota runs the Python client with args against the quota
// kproxy, with stdin from stdin, and decodes its JSON output into out.
func (q *quotaEnv) confluentQuota(t *testing.T, stdin io.Reader, until func(p *proc), out any, args ...string) {
	t.Helper()
	args = append([]string{confluentScript}, append(args, "--bootstrap", q.quotas.BootstrapAddr(), "--client-id", quotaClientID("confluent-kafka"), "--debug")...)
	p := startProcReader(t, quotaRunTimeout, stdin, nil, "python3", args...)
	if until != nil {
		until(p)
	}
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	q.checkSockets(t, q.quotas, p)
	if err := json.Unmarshal([]byte(p.stdout.String()), out); err != nil {
		t.Fatalf("confluent_client.py output: %v\n%s", err, p.stdout.String())
	}
}

func confluentQuotaProduce(t *testing.T, c *cellCtx, q *quotaEnv, topic string) int64 {
	requireConfluent(t, c)
	const what = "confluent-kafka produce"
	tr, stopTrace := q.traceLog(t, topic)
	var out struct {
		confluentThrottles
		Acked      int64    `json:"acked"`
		Errors     []string `json:"errors"`
		ErrorCount int      `json:"error_count"`
		Unflushed  int      `json:"unflushed"`
	}
	stdin, closeStdin := io.Pipe()
	q.confluentQuota(t, stdin, func(p *proc) {
		waitWindow(tr, quotaRunTimeout, p.done)
		closeStdin.Close() // the script stops producing and flushes
	}, &out, "quota-produce", "--topic", topic, "--size", strconv.Itoa(quotaRecordSize), "--batch-bytes", strconv.Itoa(quotaBatchBytes))
	time.Sleep(300 * time.Millisecond) // one more sample of the log
	stopTrace()
	if out.ErrorCount > 0 || out.Unflushed > 0 {
		t.Errorf("%s: %d delivery errors (%v), %d records not flushed", what, out.ErrorCount, out.Errors, out.Unflushed)
	}
	checkRate(t, c, what, tr, produceQuota)
	out.check(t, c, what)
	q.checkLog(t, what, topic, out.Acked)
	return out.Acked
}

func confluentQuotaFetch(t *testing.T, c *cellCtx, q *quotaEnv, topic string, n int64) {
	requireConfluent(t, c)
	const what = "confluent-kafka fetch"
	var out struct {
		confluentThrottles
		Consumed int64        `json:"consumed"`
		Trace    [][2]float64 `json:"trace"`
	}
	q.confluentQuota(t, nil, nil, &out, "quota-consume", "--topic", topic, "--count", itoa(n), "--timeout", "100",
		"--fetch-bytes", strconv.Itoa(quotaFetchMaxBytes), "--partition-fetch-bytes", strconv.Itoa(quotaFetchPartitionBytes))
	if out.Consumed != n {
		t.Errorf("%s: consumed %d distinct records of %d", what, out.Consumed, n)
	}
	tr := &rateTrace{}
	for _, s := range out.Trace {
		tr.add(time.Unix(0, int64(s[0]*1e9)), int64(s[1]))
	}
	checkRate(t, c, what, tr, fetchQuota)
	out.check(t, c, what)
}
