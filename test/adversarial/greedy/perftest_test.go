package greedy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// The real cluster: Kafka's own kafka-consumer-perf-test through kproxy
// under a fetch quota, as a greedy client runs it: several tools with one
// client id, each joining with connections of its own while the others
// already consume (a new JVM: new connections to every broker), each able
// to go faster than the quota alone. Their aggregate rate must be the
// quota, as a broker holds a client id's connections to one quota.

const (
	perfQuota      = 2_000_000 // bytes/s
	perfRecordSize = 8000
	perfTools      = 3
	perfStagger    = 3 * time.Second // between tools' starts
	// perfRecords is each tool's read: 20 MB, so that together they read
	// at the quota for 30 s, past the warm-up and the window.
	perfRecords = 2500
	perfWarmup  = 4 * time.Second // the first burst and the others joining
	perfWindow  = 20 * time.Second
)

// perfStatsRE matches a --show-detailed-stats line: time, thread, MB,
// MB/s, records, ...
var perfStatsRE = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d):(\d{3}), \d+, [0-9.]+, [0-9.]+, (\d+),`)

// perfSample is how many bytes of records one tool had read at a time.
type perfSample struct {
	at    time.Time
	bytes int64
}

// TestGreedyJavaPerfTestsOneClientID: three kafka-consumer-perf-test
// tools, started 3 s apart, read 20 MB each with one client id under a
// 2 MB/s fetch quota: the records they read together over 20 s (after 4
// s of warm-up from the first record) come at the quota ±10%, and each
// reads all its records (nothing lost to the empty throttled answers).
func TestGreedyJavaPerfTestsOneClientID(t *testing.T) {
	brokers := testkit.RealKafka(t)
	if quotaRaceEnabled {
		t.Skip("a rate measured with JVMs on a loaded machine: run without -race (go test -count=1 -run TestGreedyJavaPerfTestsOneClientID ./test/adversarial/greedy/)")
	}
	toolSh, err := filepath.Abs("../../kafka/tool.sh")
	if err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("greedy-perf-%d", time.Now().UnixNano())
	perfSeed(t, brokers, topic)
	addr := quotaStart(t, quotaConfig(brokers, "greedy-perf", perfQuota)).Bootstrap
	props := testkit.WriteFile(t, "consumer.properties", "client.id=greedy-perf\nauto.offset.reset=earliest\nfetch.max.bytes=262144\n")
	ctx := testkit.Context(t, 4*time.Minute)
	traces := make([][]perfSample, perfTools)
	var wg sync.WaitGroup
	for i := range perfTools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(time.Duration(i) * perfStagger):
			case <-ctx.Done():
				return
			}
			tr, err := perfRun(ctx, toolSh, addr, topic, props, fmt.Sprintf("%s-%d", topic, i))
			if err != nil {
				t.Errorf("tool %d: %v", i, err)
				return
			}
			traces[i] = tr
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var first time.Time
	for _, tr := range traces {
		for _, s := range tr {
			if s.bytes > 0 && (first.IsZero() || s.at.Before(first)) {
				first = s.at
			}
		}
	}
	from, to := first.Add(perfWarmup), first.Add(perfWarmup+perfWindow)
	var last time.Time
	for _, tr := range traces {
		if end := tr[len(tr)-1].at; end.After(last) {
			last = end
		}
	}
	if last.Before(to) {
		t.Fatalf("the tools read everything %v after the first record, before the %v window closed: faster than the quota", last.Sub(first), perfWarmup+perfWindow)
	}
	rate := float64(perfTotal(traces, to)-perfTotal(traces, from)) / perfWindow.Seconds()
	var perSecond []string
	for at := first; !at.After(last); at = at.Add(time.Second) {
		perSecond = append(perSecond, fmt.Sprintf("%.2f", float64(perfTotal(traces, at.Add(time.Second))-perfTotal(traces, at))/1e6))
	}
	t.Logf("MB/s second by second from the first record: %v", perSecond)
	t.Logf("%d kafka-consumer-perf-test tools, one client id: %.2f MB/s of records over %v after %v of warm-up (quota %.2f MB/s)",
		perfTools, rate/1e6, perfWindow, perfWarmup, perfQuota/1e6)
	if rate > 1.1*perfQuota || rate < 0.9*perfQuota {
		t.Errorf("the tools read %.2f MB/s together, want the quota %.2f MB/s ±10%%", rate/1e6, perfQuota/1e6)
	}
}

// perfSeed creates topic on the real cluster (3 partitions) with
// perfRecords records, written directly.
func perfSeed(t *testing.T, brokers []string, topic string) {
	t.Helper()
	// Batches of at most 64 kB: a fetch returns at least one whole batch,
	// and a response much larger than a window of quota cannot be
	// measured well (docs/quotas.md, "Request size").
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testkit.Context(t, 60*time.Second)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	t.Cleanup(func() { adm.DeleteTopics(context.Background(), topic) })
	value := bytes.Repeat([]byte{'x'}, perfRecordSize)
	for i := 0; i < perfRecords; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("seed %s: %v", topic, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("seed %s: %v", topic, err)
	}
}

// perfRun runs kafka-consumer-perf-test once, in its own group, until it
// read all perfRecords records (it fails otherwise), and returns what it
// read over time (from its detailed stats, then all of it when it exits).
func perfRun(ctx context.Context, toolSh, addr, topic, props, group string) ([]perfSample, error) {
	cmd := exec.CommandContext(ctx, toolSh, "kafka-consumer-perf-test", "--bootstrap-server", addr, "--topic", topic,
		"--num-records", strconv.Itoa(perfRecords), "--group", group, "--fetch-size", strconv.Itoa(64<<10),
		"--show-detailed-stats", "--reporting-interval", "200", "--timeout", "60000", "--command-config", props)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var tr []perfSample
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		m := perfStatsRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation("2006-01-02 15:04:05.000", m[1]+"."+m[2], time.Local)
		records, _ := strconv.ParseInt(m[3], 10, 64)
		if err == nil {
			tr = append(tr, perfSample{at, records * perfRecordSize})
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("kafka-consumer-perf-test: %w\n%s", err, stderr.String())
	}
	return append(tr, perfSample{time.Now(), perfRecords * perfRecordSize}), nil
}

// perfTotal is how many bytes all the runs had read at t: each run's
// last sample at or before t.
func perfTotal(traces [][]perfSample, t time.Time) int64 {
	var total int64
	for _, tr := range traces {
		i := sort.Search(len(tr), func(i int) bool { return tr[i].at.After(t) })
		if i > 0 {
			total += tr[i-1].bytes
		}
	}
	return total
}
