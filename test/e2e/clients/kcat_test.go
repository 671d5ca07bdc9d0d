package e2eclients

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kcat runs kcat with args and stdin, bounded by timeout, and returns its
// standard output.
func kcat(t *testing.T, timeout time.Duration, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.WaitDelay = 5 * time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v (context: %v)\nstderr:\n%s", strings.Join(args, " "), err, ctx.Err(), lastLines(stderr.String(), 40))
	}
	return stdout.Bytes()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// parseKeyValueLines parses "key:value" lines as kcat prints them with
// -f '%k:%s\n'.
func parseKeyValueLines(t *testing.T, out []byte) []record {
	t.Helper()
	var rs []record
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("kcat printed %q, want key:value", line)
		}
		rs = append(rs, record{key: k, value: v})
	}
	return rs
}

// TestKcat drives librdkafka, through kcat, against kfake through kproxy:
// metadata (-L), an idempotent acks=all producer, a simple consumer and a
// balanced consumer group.
func TestKcat(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat is not on PATH (CI installs it with apt-get install kcat)")
	}
	t.Parallel()
	e := newEnv(t)
	const topic = "kcat-topic"
	e.createTopic(topic)
	b := e.bootstrap()

	// Metadata: every broker kcat hears of is a kproxy listener.
	var md struct {
		OriginatingBroker struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"originating_broker"`
		Brokers []struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []struct {
			Topic      string `json:"topic"`
			Partitions []struct {
				Partition int32 `json:"partition"`
				Leader    int32 `json:"leader"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	out := kcat(t, 30*time.Second, nil, "-b", b, "-L", "-J", "-m", "10")
	if err := json.Unmarshal(out, &md); err != nil {
		t.Fatalf("kcat -L -J output: %v\n%s", err, out)
	}
	if len(md.Brokers) != numBrokers {
		t.Fatalf("kcat -L lists %d brokers, want %d: %s", len(md.Brokers), numBrokers, out)
	}
	for _, br := range md.Brokers {
		e.checkProxyAddr("kcat -L broker", br.Name, false)
		want, _ := e.proxy.BrokerAddr(br.ID)
		if br.Name != want {
			t.Errorf("kcat -L: broker %d is %s, kproxy advertises %s", br.ID, br.Name, want)
		}
	}
	if name, _, _ := strings.Cut(md.OriginatingBroker.Name, "/"); md.OriginatingBroker.Name != "" {
		e.checkProxyAddr("kcat -L originating broker", name, true)
	}
	found := false
	for _, tp := range md.Topics {
		if tp.Topic == topic {
			found = true
			if len(tp.Partitions) != numPartitions {
				t.Errorf("kcat -L: %s has %d partitions, want %d", topic, len(tp.Partitions), numPartitions)
			}
		}
	}
	if !found {
		t.Fatalf("kcat -L does not list %s: %s", topic, out)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Produce 1,000 keyed records, idempotent with acks=all.
	want := makeRecords("kcat", 1000)
	var in bytes.Buffer
	for _, r := range want {
		in.WriteString(r.key + ":" + r.value + "\n")
	}
	kcat(t, 60*time.Second, in.Bytes(), "-b", b, "-P", "-t", topic, "-K:",
		"-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5")

	// Consume from the beginning to the end of every partition.
	out = kcat(t, 60*time.Second, nil, "-b", b, "-C", "-t", topic, "-o", "beginning", "-e", "-f", `%k:%s\n`)
	checkSameRecords(t, "kcat -C", parseKeyValueLines(t, out), want)

	// A balanced consumer group (JoinGroup/SyncGroup/OffsetCommit through
	// the coordinator's kproxy listener) reads them all too, and exits at
	// the end of its partitions.
	out = kcat(t, 90*time.Second, nil, "-b", b, "-G", "kcat-group", "-X", "auto.offset.reset=earliest",
		"-e", "-f", `%k:%s\n`, topic)
	checkSameRecords(t, "kcat -G", parseKeyValueLines(t, out), want)
	e.checkCommitted("kcat-group", topic, int64(len(want)))

	// The group resumes from its commits: a second run gets only new records.
	more := makeRecords("kcat-more", 10)
	in.Reset()
	for _, r := range more {
		in.WriteString(r.key + ":" + r.value + "\n")
	}
	kcat(t, 60*time.Second, in.Bytes(), "-b", b, "-P", "-t", topic, "-K:", "-X", "enable.idempotence=true", "-X", "acks=all")
	out = kcat(t, 90*time.Second, nil, "-b", b, "-G", "kcat-group", "-X", "auto.offset.reset=earliest",
		"-e", "-f", `%k:%s\n`, topic)
	checkSameRecords(t, "kcat -G second run", parseKeyValueLines(t, out), more)
	e.checkCommitted("kcat-group", topic, int64(len(want)+len(more)))
}
