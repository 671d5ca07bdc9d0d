package e2esecurity

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/protocol"
)

const memoryConfig = `
upstream: {bootstrap_servers: [%q]}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
limits: {max_frame_bytes: %d, max_buffered_bytes: %d}
policy:
  default: deny
  rules:
    - {name: app, principals: ["*"], allow: [describe, write, read], topics: ["*"]}
`

const (
	hostileFrameBytes = 16 << 20
	hostileBuffered   = 64 << 20
	// rssLimit is the peak resident size kproxy must stay under: the
	// buffered bound, one charge over it, and the runtime's headroom
	// (GOMEMLIMIT below keeps the collector close behind).
	rssLimit      = 400 << 20
	addressLimit  = 3 << 30 // prlimit --as: an allocation beyond is fatal
	hostileConns  = 8
	hostileRounds = 2
)

// TestHostileDecodeMemoryBounded runs the real binary with a policy loaded
// (so every request the policy reads is decoded) under an address-space
// limit, sends from 8 connections at once, twice over, a maximum-size frame
// of every API the policy decodes, each an array of near-empty elements
// that kmsg would decode to 20-30 times its size, and checks that kproxy
// refuses each (connection closed, counted as protocol_error, never sent
// upstream), keeps serving a franz-go producer throughout, and that its
// peak RSS stays under rssLimit.
func TestHostileDecodeMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and sends a few GiB over loopback")
	}
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	yaml := fmt.Sprintf(memoryConfig, cluster.ListenAddrs()[0], hostileFrameBytes, hostileBuffered)
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	enf, err := policy.New(cfg.Policy, cfg.Audit)
	if err != nil {
		t.Fatal(err)
	}
	var reg filter.Registry
	enf.Register(&reg)
	enf.Close()
	var keys []int16
	for _, h := range reg.Requests() {
		keys = append(keys, h.Key)
	}
	var frames [][]byte
	var apis []string
	for _, key := range keys {
		// The newest version whose dense encoding amplifies past the bound
		// (Produce v13's topic ids make its elements large, v12's are not).
		for v := protocol.MaxVersion(key); v >= 0; v-- {
			body, ok := testkit.DenseRequestBody(key, v, hostileFrameBytes-64)
			if !ok {
				continue
			}
			if _, err := wire.DecodedSize(key, v, body, false); !errors.Is(err, wire.ErrDecodeTooLarge) {
				continue // decodes within bounds: not hostile, and it would reach kfake
			}
			h := requestHeader(key, v, 1, "hostile", protocol.IsFlexible(key, v), nil)
			frames = append(frames, sized(append(h, body...)))
			apis = append(apis, fmt.Sprintf("%s v%d", protocol.APIName(key), v))
			break
		}
	}
	if len(frames) < 10 {
		t.Fatalf("only %d hostile frames for the %d keys the policy decodes", len(frames), len(keys))
	}
	t.Logf("%d hostile frames of %d MiB: %s", len(frames), hostileFrameBytes>>20, strings.Join(apis, ", "))

	cfgPath := testkit.WriteConfig(t, yaml)
	bin := testkit.SharedKproxy(t)
	// Under prlimit --as, an allocation the limit cannot hold kills
	// kproxy (fatal error: out of memory) instead of the machine swapping.
	// Without prlimit the RSS watchdog alone enforces the limit.
	wrapper := bin
	if _, err := exec.LookPath("prlimit"); err == nil {
		wrapper = filepath.Join(t.TempDir(), "kproxy-limited")
		script := fmt.Sprintf("#!/bin/sh\nexec prlimit --as=%d -- %s \"$@\"\n", addressLimit, bin)
		if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("prlimit not found: RSS watchdog only")
	}
	t.Setenv("GOMEMLIMIT", strconv.Itoa(hostileBuffered*3))
	kp := testkit.RunBinary(t, wrapper, cfgPath)
	kp.WaitReady()
	pid := kp.Cmd.Process.Pid

	// The watchdog stops kproxy as soon as it passes the limit, so a
	// failing run does not take the machine's memory with it.
	var overLimit atomic.Int64
	stopWatch := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if rss := procStatusBytes(pid, "VmRSS"); rss > rssLimit {
				overLimit.Store(rss)
				kp.Cmd.Process.Kill()
				return
			}
		}
	}()

	// A well-behaved producer, throughout.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.DefaultProduceTopic("t"), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var produced, produceFailures atomic.Int64
	var lastProduceErr atomic.Value
	stopProduce := make(chan struct{})
	var producer sync.WaitGroup
	producer.Add(1)
	go func() {
		defer producer.Done()
		for {
			select {
			case <-stopProduce:
				return
			case <-time.After(50 * time.Millisecond):
			}
			pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
			err := cl.ProduceSync(pctx, &kgo.Record{Value: []byte("ok")}).FirstErr()
			pcancel()
			if err != nil {
				produceFailures.Add(1)
				lastProduceErr.Store(err.Error())
				continue
			}
			produced.Add(1)
		}
	}()

	work := make(chan []byte)
	var attackers sync.WaitGroup
	var closedByProxy, answered atomic.Int64
	for range hostileConns {
		attackers.Add(1)
		go func() {
			defer attackers.Done()
			for frame := range work {
				switch sendHostile(kp.Bootstrap, frame) {
				case nil:
					closedByProxy.Add(1)
				default:
					answered.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	for range hostileRounds {
		for _, f := range frames {
			work <- f
		}
	}
	close(work)
	attackers.Wait()
	elapsed := time.Since(start)
	time.Sleep(500 * time.Millisecond) // the producer goes on after the attack
	close(stopProduce)
	producer.Wait()
	close(stopWatch)
	watch.Wait()

	peak := procStatusBytes(pid, "VmHWM")
	t.Logf("%d hostile frames in %s: %d closed by kproxy, %d not; producer: %d ok, %d failed; peak RSS %d MiB (limit %d MiB)",
		len(frames)*hostileRounds, elapsed.Round(time.Millisecond), closedByProxy.Load(), answered.Load(),
		produced.Load(), produceFailures.Load(), peak>>20, rssLimit>>20)
	if rss := overLimit.Load(); rss > 0 {
		t.Fatalf("kproxy's RSS reached %d MiB, over the %d MiB limit (killed)", rss>>20, rssLimit>>20)
	}
	if err := kp.Cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("kproxy died under the attack: %v", err)
	}
	if peak == 0 || peak > rssLimit {
		t.Errorf("peak RSS %d MiB, limit %d MiB", peak>>20, rssLimit>>20)
	}
	if n := answered.Load(); n > 0 {
		t.Errorf("%d hostile frames were not refused with a close", n)
	}
	if produced.Load() < 5 || produceFailures.Load() > 0 {
		t.Errorf("well-behaved producer: %d ok, %d failed (last: %v)", produced.Load(), produceFailures.Load(), lastProduceErr.Load())
	}
	_, metrics := testkit.HTTPGet(t, "http://"+kp.Admin+"/metrics")
	for _, want := range []string{
		fmt.Sprintf(`kproxy_connections_closed_total{reason="protocol_error"} %d`, len(frames)*hostileRounds),
		fmt.Sprintf("kproxy_buffered_bytes_limit %s", strconv.FormatFloat(hostileBuffered, 'g', -1, 64)),
		"kproxy_buffered_bytes 0",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	kp.WaitLog("log line for a refused frame", func(l testkit.LogLine) bool {
		cause, _ := l["cause"].(string)
		return l["reason"] == "protocol_error" && strings.Contains(cause, "too much memory")
	})
}

// sendHostile writes frame on a new connection and reports nil if kproxy
// then closes the connection without answering.
func sendHostile(addr string, frame []byte) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(90 * time.Second))
	if _, err := c.Write(frame); err != nil && !testkit.IsClosedErr(err) {
		return fmt.Errorf("write: %w", err)
	}
	n, err := io.Copy(io.Discard, c)
	switch {
	case n > 0:
		return fmt.Errorf("answered with %d bytes", n)
	case err != nil && !testkit.IsClosedErr(err):
		return err
	}
	return nil
}

// procStatusBytes reads a kB field (VmRSS, VmHWM) of /proc/<pid>/status.
func procStatusBytes(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestBufferedBytesBackPressure: limits.max_buffered_bytes is charged for
// a request frame as its bytes are read, and a connection that wants more
// than is left waits instead of growing kproxy's memory. A raw client sends
// half of a 900 KiB Metadata request (a 900 KiB topic name, which the
// policy decodes) and stalls; a franz-go producer's 700 KiB produce then
// does not fit the 1 MiB bound and waits, not answered, until the raw
// client finishes its frame; then both are answered and the gauge is back
// at zero (nothing leaks).
func TestBufferedBytesBackPressure(t *testing.T) {
	const bound = 1 << 20
	px, cl, ctx := boundedPolicyProxy(t, bound)
	buffered := func() float64 { return testkit.MetricValue(t, px.Registry, "kproxy_buffered_bytes") }
	if got := testkit.MetricValue(t, px.Registry, "kproxy_buffered_bytes_limit"); got != bound {
		t.Fatalf("kproxy_buffered_bytes_limit = %v, want %d", got, bound)
	}

	name := strings.Repeat("n", 900<<10)
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	frame := sized(append(requestHeader(wire.MetadataKey, 12, 7, "stalling", true, nil), req.AppendTo(nil)...))
	raw, err := net.DialTimeout("tcp", px.BootstrapAddr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write(frame[:len(frame)/2]); err != nil {
		t.Fatal(err)
	}
	// Charged as it arrives: what was sent, at most 256 KiB ahead of it.
	sent := float64(len(frame) / 2)
	if !waitFor(5*time.Second, func() bool { return buffered() >= sent }) {
		t.Fatalf("kproxy_buffered_bytes = %v while %v bytes of a %d-byte frame have arrived, want what arrived charged", buffered(), sent, len(frame))
	}
	if b := buffered(); b > sent+256<<10 {
		t.Fatalf("kproxy_buffered_bytes = %v with %v bytes of the frame arrived: charged ahead of its bytes", b, sent)
	}

	value := make([]byte, 700<<10)
	rand.Read(value) // incompressible: the produce frame is as large
	produced := make(chan error, 1)
	go func() { produced <- cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr() }()
	select {
	case err := <-produced:
		t.Fatalf("a 700 KiB produce was answered (%v) while the 1 MiB bound held a 900 KiB frame: no back-pressure", err)
	case <-time.After(500 * time.Millisecond):
	}
	if b := buffered(); b > bound {
		t.Errorf("kproxy_buffered_bytes = %v, over the %d bound while a request waits", b, bound)
	}

	if _, err := raw.Write(frame[len(frame)/2:]); err != nil {
		t.Fatal(err)
	}
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(raw, size[:]); err != nil {
		t.Fatalf("the stalled Metadata request, once complete, got no response: %v", err)
	}
	select {
	case err := <-produced:
		if err != nil {
			t.Fatalf("produce after the bound freed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting produce was never served after the bound freed")
	}
	if !waitFor(5*time.Second, func() bool { return buffered() == 0 }) {
		t.Errorf("kproxy_buffered_bytes = %v after every request was answered: a charge leaked", buffered())
	}
}

// TestLocalAnswerBeforeDialReleasesBudget: a connection whose first
// requests the policy answers itself (here, produces to a denied topic)
// is answered before any upstream is dialled; the budget charged for
// reading each of them whole is released all the same. It once stayed
// charged, and enough such connections would have held
// limits.max_buffered_bytes for ever.
func TestLocalAnswerBeforeDialReleasesBudget(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "open"))
	yaml := testkit.Config{Upstream: cluster.ListenAddrs(), Log: "{level: error}", Extra: `policy:
  default: deny
  rules:
    - {name: app, principals: ["*"], allow: [describe, write], topics: ["open"]}
`}.YAML()
	px, _ := startWithPolicy(t, yaml)

	c := dialRaw(t, px.BootstrapAddr())
	defer c.Close()
	for i := range 3 {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(9)
		req.Acks = -1
		req.TimeoutMillis = 1000
		req.Topics = []kmsg.ProduceRequestTopic{{Topic: "secret", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
		resp, err := c.RoundTrip(req)
		if err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		if code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 29 {
			t.Fatalf("produce %d to a denied topic: error %d, want 29 (TOPIC_AUTHORIZATION_FAILED)", i, code)
		}
	}
	if got := testkit.MetricValue(t, px.Registry, "kproxy_buffered_bytes"); got != 0 {
		t.Errorf("kproxy_buffered_bytes = %v after three answered requests, want 0 (the charge leaked)", got)
	}
}

// TestSlowSendersCannotHoldTheBudget: clients that announce large frames
// and then trickle them (a slowloris) hold only what they sent, so they
// cannot tie up limits.max_buffered_bytes for everyone. Two raw clients
// each announce a 900 KiB request under a 1 MiB bound and send 20 KiB of
// it; a franz-go producer's 300 KiB produce is still answered at once.
// When a frame was charged whole before its bytes came, the first stalled
// client held 900 KiB, the second waited for room, and every request after
// it queued behind that wait until the idle timeout.
func TestSlowSendersCannotHoldTheBudget(t *testing.T) {
	const bound = 1 << 20
	px, cl, ctx := boundedPolicyProxy(t, bound)

	name := strings.Repeat("n", 900<<10)
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	frame := sized(append(requestHeader(wire.MetadataKey, 12, 7, "slow", true, nil), req.AppendTo(nil)...))
	for range 2 {
		raw, err := net.DialTimeout("tcp", px.BootstrapAddr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		// More than the 16 KiB kproxy peeks for the header, so that
		// kproxy is reading the frame itself when the sender stalls.
		if _, err := raw.Write(frame[:20<<10]); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // both frames begun

	value := make([]byte, 300<<10)
	rand.Read(value)
	produceCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(produceCtx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		t.Fatalf("a 300 KiB produce while two clients trickle 900 KiB frames: %v (the slow senders held the budget)", err)
	}
}

// boundedPolicyProxy starts kproxy with a policy (so produces and metadata
// requests are read whole) and limits.max_buffered_bytes and
// max_frame_bytes both at bound, in front of a one-broker kfake with topic
// "t", and a franz-go producer to "t" that has produced once.
func boundedPolicyProxy(t *testing.T, bound int) (*kproxytest.Kproxy, *kgo.Client, context.Context) {
	t.Helper()
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	yaml := testkit.Config{Upstream: cluster.ListenAddrs(), Log: "{level: error}", Extra: fmt.Sprintf(`limits: {max_frame_bytes: %d, max_buffered_bytes: %d}
policy:
  default: deny
  rules:
    - {name: app, principals: ["*"], allow: [describe, write], topics: ["*"]}
`, bound, bound)}.YAML()
	px, _ := startWithPolicy(t, yaml)
	ctx := testkit.Context(t, 60*time.Second)
	cl := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DefaultProduceTopic("t"), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchMaxBytes(900<<10))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm-up")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return px, cl, ctx
}
