package conformance

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// javaQuotaRecords is how many records kafka-producer-perf-test sends: at
// the quota, 3 s more than the warm-up and the window.
const javaQuotaRecords = int64(produceQuota * (quotaWarmup + quotaWindow + 3*time.Second) / time.Second / quotaRecordSize)

// javaMetric is the value of metric GROUP:NAME of the client, from a
// tool's --print-metrics table ("group:name:{client-id=ID} : value").
func javaMetric(out, group, name, clientID string) (float64, bool) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(group+":"+name+":{client-id="+clientID+"}") + `\s*:\s*(\S+)\s*$`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// checkJavaMetrics fails t unless each of the tool's metrics is there
// and above zero (positive) or zero (zero); it notes their values.
func checkJavaMetrics(t *testing.T, c *cellCtx, tool, out, group, clientID string, positive, zero []string) {
	t.Helper()
	var seen []string
	check := func(name string, ok func(float64) bool, want string) {
		v, found := javaMetric(out, group, name, clientID)
		if !found {
			t.Errorf("%s --print-metrics has no %s:%s for client %s", tool, group, name, clientID)
			return
		}
		if !ok(v) {
			t.Errorf("%s: %s is %v, want %s", tool, name, v, want)
		}
		seen = append(seen, name+" "+strconv.FormatFloat(v, 'f', 1, 64))
	}
	for _, name := range positive {
		check(name, func(v float64) bool { return v > 0 }, "more than 0 (the client reported throttling)")
	}
	for _, name := range zero {
		check(name, func(v float64) bool { return v == 0 }, "0")
	}
	c.note("%s: %s", tool, strings.Join(seen, ", "))
}

// checkToolLog fails t if a tool logged an error; it notes how often the
// Java client logged that a connection was throttled.
func checkToolLog(t *testing.T, c *cellCtx, p *proc) {
	t.Helper()
	stderr := p.stderr.String()
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, " ERROR ") || strings.Contains(line, "Exception") {
			t.Errorf("%s logged: %s", p.name, line)
			break
		}
	}
	c.note("%s logged %d \"is throttled\" warnings", p.name, strings.Count(stderr, " is throttled for "))
}

func javaQuotaProduce(t *testing.T, c *cellCtx, q *quotaEnv, topic string) int64 {
	requireJava(t, c)
	clientID := quotaClientID("java")
	tr, stopTrace := q.traceLog(t, topic)
	n := itoa(javaQuotaRecords)
	p := javaStart(t, quotaRunTimeout, nil, "kafka-producer-perf-test", "--bootstrap-server", q.quotas.BootstrapAddr(), "--topic", topic,
		"--num-records", n, "--record-size", strconv.Itoa(quotaRecordSize), "--throughput", "-1", "--print-metrics",
		"--command-config", q.javaProps(t, q.quotas, "client.id="+clientID, "acks=all", "enable.idempotence=true", "compression.type=none", "batch.size="+strconv.Itoa(quotaBatchBytes)))
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	time.Sleep(300 * time.Millisecond) // one more sample of the log
	stopTrace()
	q.checkSockets(t, q.quotas, p)
	out := p.stdout.String()
	if !regexp.MustCompile(`(?m)^` + n + ` records sent`).MatchString(out) {
		t.Errorf("kafka-producer-perf-test did not report %s records sent:\n%s", n, lastLines(out, 3))
	}
	checkToolLog(t, c, p)
	checkJavaMetrics(t, c, "kafka-producer-perf-test", out, "producer-metrics", clientID,
		[]string{"produce-throttle-time-avg", "produce-throttle-time-max"}, []string{"record-error-total", "record-retry-total"})
	checkRate(t, c, "kafka-producer-perf-test", tr, produceQuota)
	q.checkLog(t, "kafka-producer-perf-test", topic, javaQuotaRecords)
	return javaQuotaRecords
}

// perfStatsRE matches a --show-detailed-stats line of
// kafka-consumer-perf-test: time, thread, MB, MB/s, records, ...
var perfStatsRE = regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}), \d+, [0-9.]+, [0-9.]+, (\d+),`)

func javaQuotaFetch(t *testing.T, c *cellCtx, q *quotaEnv, topic string, n int64) {
	requireJava(t, c)
	clientID := quotaClientID("java")
	group := name(c, "g")
	start := time.Now()
	p := javaStart(t, quotaRunTimeout, nil, "kafka-consumer-perf-test", "--bootstrap-server", q.quotas.BootstrapAddr(), "--topic", topic,
		"--num-records", itoa(n), "--group", group, "--fetch-size", strconv.Itoa(quotaFetchPartitionBytes), "--show-detailed-stats", "--reporting-interval", "500", "--print-metrics", "--timeout", "30000",
		"--command-config", q.javaProps(t, q.quotas, "client.id="+clientID, "auto.offset.reset=earliest", "fetch.max.bytes="+strconv.Itoa(quotaFetchMaxBytes)))
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	q.checkSockets(t, q.quotas, p)
	out := p.stdout.String()
	if strings.Contains(out+p.stderr.String(), "Exiting before consuming the expected number") {
		t.Errorf("kafka-consumer-perf-test gave up before consuming %d records", n)
	}
	checkToolLog(t, c, p)
	checkJavaMetrics(t, c, "kafka-consumer-perf-test", out, "consumer-fetch-manager-metrics", clientID,
		[]string{"fetch-throttle-time-avg", "fetch-throttle-time-max"}, nil)
	tr := &rateTrace{}
	tr.add(start, 0)
	for _, m := range perfStatsRE.FindAllStringSubmatch(out, -1) {
		// The tool's default date format ends in seconds:millis.
		stamp := m[1][:len(m[1])-4] + "." + m[1][len(m[1])-3:]
		at, err := time.ParseInLocation("2006-01-02 15:04:05.000", stamp, time.Local)
		records, _ := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			t.Fatalf("kafka-consumer-perf-test printed time %q: %v", m[1], err)
		}
		tr.add(at, records*quotaRecordSize)
	}
	checkRate(t, c, "kafka-consumer-perf-test", tr, fetchQuota)
	// The tool commits on close: every record was read once the group's
	// offsets add up to all of them.
	q.checkCommitted(t, group, topic, n)
}
