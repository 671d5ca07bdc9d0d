package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

const clusterSh = "../kafka/cluster.sh"

// restartNode is the node test/kafka/cluster.sh restarts mid-stream.
const restartNode = 2

// workload is one client producing to its own topic and consuming it with
// a group, both for as long as the restart window lasts. Records are
// matched by value, unique within the workload.
type workload struct {
	client string
	topic  string

	mu         sync.Mutex
	acked      []string       // values the producer had acknowledged
	sendErrors []string       // failed sends (not losses: never acked)
	consumed   map[string]int // value -> deliveries
	err        error          // the workload itself broke

	stopProducing func() // stops the producer and waits for its last acks
	refresh       func() // re-reads a consumer process's output, if any
	stopConsuming func()
}

func (w *workload) ack(v string) { w.mu.Lock(); w.acked = append(w.acked, v); w.mu.Unlock() }
func (w *workload) sendErr(err string) {
	w.mu.Lock()
	w.sendErrors = append(w.sendErrors, err)
	w.mu.Unlock()
}
func (w *workload) consume(v string) { w.mu.Lock(); w.consumed[v]++; w.mu.Unlock() }
func (w *workload) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// lost lists acked values never consumed.
func (w *workload) lost() []string {
	if w.refresh != nil {
		w.refresh()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, v := range w.acked {
		if w.consumed[v] == 0 {
			out = append(out, v)
		}
	}
	return out
}

// restartClients take part in the restart window; the Java tools and the
// processes are skipped (their cells SKIP) where they are not installed.
var restartClients = []string{"franz-go", "sarama", "kafka-go", "kcat", "confluent-kafka", "java"}

// TestRollingRestart restarts one Kafka node (test/kafka/cluster.sh
// restart-node) while every client produces and consumes with a group
// through kproxy; afterwards every acknowledged record must have been
// consumed. Real Kafka only; it runs after every other cell so that
// nothing else sees the restart.
func TestRollingRestart(t *testing.T) {
	skipUnlessSelected(t, "kafka")
	if testkit.RealKafkaBootstrap() == nil {
		for _, cl := range restartClients {
			runCell(t, "kafka", cl, "rolling-restart", false, func(t *testing.T, c *cellCtx) {
				skipCell(t, c, "no real Kafka cluster: set KPROXY_KAFKA_BOOTSTRAP (test/kafka/cluster.sh start prints it)")
			})
		}
		return
	}
	unavailable := map[string]string{"java": javaUnavailable()}
	if _, err := exec.LookPath("kcat"); err != nil {
		unavailable["kcat"] = "kcat is not on PATH (apt-get install kcat)"
	}
	if _, err := confluentCheck(); err != nil {
		unavailable["confluent-kafka"] = "confluent-kafka for Python is not installed (pip install confluent-kafka)"
	}
	ws := map[string]*workload{}
	var window, restartTook time.Duration
	windowFailed := false
	t.Run("kafka/restart-window", func(t *testing.T) {
		start := time.Now()
		defer func() { window, windowFailed = time.Since(start), t.Failed() }()
		restartTook = runRestartWindow(t, ws, unavailable)
	})
	for _, cl := range restartClients {
		runCell(t, "kafka", cl, "rolling-restart", false, func(t *testing.T, c *cellCtx) {
			if r := unavailable[cl]; r != "" {
				skipCell(t, c, r)
			}
			w := ws[cl]
			if windowFailed || w == nil {
				t.Fatal("the restart window failed (see TestRollingRestart/kafka/restart-window)")
			}
			if w.err != nil {
				t.Fatalf("workload: %v", w.err)
			}
			lost := w.lost()
			for i, v := range lost {
				if i < 3 {
					t.Errorf("acknowledged record %s was never consumed", v)
				}
			}
			if len(lost) > 0 {
				t.Errorf("%d of %d acknowledged records lost across the restart of node %d", len(lost), len(w.acked), restartNode)
			}
			if len(w.acked) < 1000 {
				t.Errorf("only %d records acknowledged: the workload did not run through the restart", len(w.acked))
			}
			dups := 0
			for _, n := range w.consumed {
				dups += max(n-1, 0)
			}
			for i, e := range w.sendErrors {
				if i < 3 {
					t.Logf("send error: %s", e)
				}
			}
			c.note("node %d restarted (%s) mid-stream in a %s window: %d records acked, %d lost, %d send errors, %d redelivered",
				restartNode, restartTook.Round(time.Second), window.Round(time.Second), len(w.acked), len(lost), len(w.sendErrors), dups)
		})
	}
}

// runRestartWindow starts every workload, restarts a node under them,
// stops the producers, waits until the consumers have caught up, and
// returns how long the restart took.
func runRestartWindow(t *testing.T, ws map[string]*workload, unavailable map[string]string) time.Duration {
	e := newEnv(t, "kafka")
	c := &cellCtx{key: cellKey{"kafka", "restart", "rolling-restart"}}
	startWorkload := map[string]func(*testing.T, *workload){
		"franz-go": e.franzWorkload, "sarama": e.saramaWorkload, "kafka-go": e.kafkagoWorkload,
		"kcat": e.kcatWorkload, "confluent-kafka": e.confluentWorkload, "java": e.javaWorkload,
	}
	for _, cl := range restartClients {
		if unavailable[cl] != "" {
			continue
		}
		w := &workload{client: cl, topic: e.newTopic(t, c, cl, partitions), consumed: map[string]int{}}
		ws[cl] = w
		startWorkload[cl](t, w)
	}

	time.Sleep(8 * time.Second)
	restart := exec.Command(clusterSh, "restart-node", strconv.Itoa(restartNode))
	restart.Env = append(os.Environ(), "KAFKA_NO_FETCH=1")
	start := time.Now()
	out, err := restart.CombinedOutput()
	took := time.Since(start)
	t.Logf("cluster.sh restart-node %d took %s:\n%s", restartNode, took.Round(time.Second), lastLines(string(out), 8))
	if err != nil {
		t.Errorf("cluster.sh restart-node %d: %v", restartNode, err)
	}
	time.Sleep(5 * time.Second) // keep producing with the node back

	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.stopProducing() }()
	}
	wg.Wait()
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		behind := 0
		for _, w := range ws {
			behind += len(w.lost())
		}
		if behind == 0 {
			break
		}
	}
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.stopConsuming() }()
	}
	wg.Wait()
	return took
}

// pace calls fn every 100ms with the next batch of values until stop is
// closed: 300 records/s.
func pace(prefix string, stop <-chan struct{}, fn func(batch []rec)) {
	for i := 0; ; i += 30 {
		select {
		case <-stop:
			return
		default:
		}
		fn(makeRecsFrom(prefix, i, 30))
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) franzWorkload(t *testing.T, w *workload) {
	prod := e.kgoClient(t, kgo.ProducerLinger(5*time.Millisecond), kgo.RecordDeliveryTimeout(2*time.Minute))
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		pace("franz", stop, func(rs []rec) {
			for _, r := range rs {
				prod.Produce(context.Background(), &kgo.Record{Topic: w.topic, Key: []byte(r.key), Value: []byte(r.value)}, func(rec *kgo.Record, err error) {
					if err != nil {
						w.sendErr(err.Error())
					} else {
						w.ack(string(rec.Value))
					}
				})
			}
		})
		prod.Flush(context.Background())
	}()
	w.stopProducing = func() { close(stop); <-done }

	cons := e.kgoClient(t, kgo.ConsumerGroup(name(&cellCtx{key: cellKey{"kafka", w.client, "restart"}}, "g")), kgo.ConsumeTopics(w.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	cdone := make(chan struct{})
	go func() {
		defer close(cdone)
		for ctx.Err() == nil {
			cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { w.consume(string(r.Value)) })
		}
	}()
	w.stopConsuming = func() { cancel(); <-cdone }
}

func (e *env) saramaWorkload(t *testing.T, w *workload) {
	cfg := saramaConfig()
	cfg.Producer.Retry.Max = 1000
	cfg.Producer.Retry.Backoff = 250 * time.Millisecond
	cfg.Producer.Return.Errors = true
	cfg.Metadata.Retry.Max = 100
	cl := saramaClient(t, e.bootstrap(), cfg)
	ap, err := sarama.NewAsyncProducerFromClient(cl)
	if err != nil {
		t.Fatalf("sarama async producer: %v", err)
	}
	var results sync.WaitGroup
	results.Add(2)
	go func() {
		defer results.Done()
		for m := range ap.Successes() {
			v, _ := m.Value.Encode()
			w.ack(string(v))
		}
	}()
	go func() {
		defer results.Done()
		for pe := range ap.Errors() {
			w.sendErr(pe.Err.Error())
		}
	}()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		pace("sarama", stop, func(rs []rec) {
			for _, r := range rs {
				ap.Input() <- &sarama.ProducerMessage{Topic: w.topic, Key: sarama.StringEncoder(r.key), Value: sarama.StringEncoder(r.value)}
			}
		})
	}()
	w.stopProducing = func() {
		close(stop)
		<-done
		ap.AsyncClose()
		results.Wait()
	}

	ccfg := saramaConfig()
	ccfg.Metadata.Retry.Max = 100
	ccl := saramaClient(t, e.bootstrap(), ccfg)
	cg, err := sarama.NewConsumerGroupFromClient(name(&cellCtx{key: cellKey{"kafka", w.client, "restart"}}, "g"), ccl)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	h := &streamHandler{w: w}
	ctx, cancel := context.WithCancel(context.Background())
	cdone := make(chan struct{})
	go func() {
		defer close(cdone)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{w.topic}, h); err != nil && ctx.Err() == nil {
				t.Logf("sarama group: %v (retrying)", err)
				time.Sleep(time.Second)
			}
		}
	}()
	w.stopConsuming = func() { cancel(); <-cdone; cg.Close() }
}

// streamHandler records every message of a sarama group session.
type streamHandler struct{ w *workload }

func (*streamHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*streamHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *streamHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.w.consume(string(m.Value))
		sess.MarkMessage(m, "")
	}
	return nil
}

func (e *env) kafkagoWorkload(t *testing.T, w *workload) {
	wr := &kafka.Writer{
		Addr: kafka.TCP(e.bootstrap()), Topic: w.topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchSize: 30, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 30, WriteBackoffMax: time.Second,
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		pace("kafkago", stop, func(rs []rec) {
			msgs := make([]kafka.Message, len(rs))
			for i, r := range rs {
				msgs[i] = kafka.Message{Key: []byte(r.key), Value: []byte(r.value)}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := wr.WriteMessages(ctx, msgs...)
			var we kafka.WriteErrors
			for i, m := range msgs {
				switch {
				case err == nil:
					w.ack(string(m.Value))
				case errors.As(err, &we) && we[i] == nil:
					w.ack(string(m.Value))
				default:
					w.sendErr(err.Error())
				}
			}
		})
		wr.Close()
	}()
	w.stopProducing = func() { close(stop); <-done }

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{e.bootstrap()}, GroupID: name(&cellCtx{key: cellKey{"kafka", w.client, "restart"}}, "g"), Topic: w.topic,
		StartOffset: kafka.FirstOffset, MaxWait: 200 * time.Millisecond, CommitInterval: 100 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	cdone := make(chan struct{})
	go func() {
		defer close(cdone)
		for ctx.Err() == nil {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				if ctx.Err() == nil {
					t.Logf("kafka-go reader: %v", err)
					time.Sleep(time.Second)
				}
				continue
			}
			w.consume(string(m.Value))
		}
	}()
	w.stopConsuming = func() { cancel(); <-cdone; r.Close() }
}

// streamProc starts a producer process fed at 300 records/s through its
// standard input until stopProducing closes it.
func streamProc(t *testing.T, w *workload, prefix string, lineOf func(rec) string, start func(stdin io.Reader) *proc) *proc {
	pr, pw := io.Pipe()
	p := start(pr)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		pace(prefix, stop, func(rs []rec) {
			var b bytes.Buffer
			for _, r := range rs {
				b.WriteString(lineOf(r))
			}
			pw.Write(b.Bytes())
		})
		pw.Close()
	}()
	w.stopProducing = func() {
		close(stop)
		<-done
		if err := p.wait(); err != nil {
			w.fail(fmt.Errorf("%s", p.failure(err)))
		}
	}
	return p
}

func (e *env) kcatWorkload(t *testing.T, w *workload) {
	var written []string
	var wmu sync.Mutex
	p := streamProc(t, w, "kcat", func(r rec) string {
		wmu.Lock()
		written = append(written, r.value)
		wmu.Unlock()
		return r.key + ":" + r.value + "\n"
	}, func(stdin io.Reader) *proc {
		return startProcReader(t, 300*time.Second, stdin, nil, "kcat", "-b", e.bootstrap(), "-t", w.topic, "-P", "-K:",
			"-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5", "-X", "debug=broker")
	})
	stopProducing := w.stopProducing
	w.stopProducing = func() {
		stopProducing()
		// kcat waits for every delivery report before exiting, and
		// exits non-zero (with "Delivery failed" lines) if any failed.
		if w.err == nil {
			wmu.Lock()
			for _, v := range written {
				w.ack(v)
			}
			wmu.Unlock()
		}
		e.checkSockets(t, e.plain, p)
	}
	cons := startProc(t, 300*time.Second, nil, nil, "kcat", "-b", e.bootstrap(), "-G", name(&cellCtx{key: cellKey{"kafka", w.client, "restart"}}, "g"),
		"-X", "auto.offset.reset=earliest", "-X", "debug=broker", "-u", "-f", `%s\n`, w.topic)
	w.refresh = func() { w.setConsumed(strings.Split(cons.stdout.String(), "\n")) }
	w.stopConsuming = func() { cons.stop(); w.refresh(); e.checkSockets(t, e.plain, cons) }
}

// setConsumed replaces the consumed set with lines (one value each; a
// trailing partial line is ignored).
func (w *workload) setConsumed(lines []string) {
	m := map[string]int{}
	for i, l := range lines {
		if l != "" && i < len(lines)-1 {
			m[l]++
		}
	}
	w.mu.Lock()
	w.consumed = m
	w.mu.Unlock()
}

func (e *env) confluentWorkload(t *testing.T, w *workload) {
	pr, pw := io.Pipe()
	prod := startProcReader(t, 300*time.Second, pr, nil, "python3", confluentScript, "stream-produce", "--bootstrap", e.bootstrap(),
		"--topic", w.topic, "--prefix", "confluent", "--rate", "300", "--debug")
	w.stopProducing = func() {
		pw.Close()
		if err := prod.wait(); err != nil {
			w.fail(fmt.Errorf("%s", prod.failure(err)))
			return
		}
		var out struct {
			Acked      []string `json:"acked"`
			Errors     []string `json:"errors"`
			ErrorCount int      `json:"error_count"`
			Unflushed  int      `json:"unflushed"`
		}
		if err := json.Unmarshal([]byte(prod.stdout.String()), &out); err != nil {
			w.fail(fmt.Errorf("stream-produce output: %v", err))
			return
		}
		for _, v := range out.Acked {
			w.ack(v)
		}
		for i := 0; i < out.ErrorCount; i++ {
			w.sendErr(strings.Join(out.Errors, "; "))
		}
		e.checkSockets(t, e.plain, prod)
	}
	cons := startProc(t, 300*time.Second, nil, nil, "python3", confluentScript, "stream-consume", "--bootstrap", e.bootstrap(),
		"--topic", w.topic, "--group", name(&cellCtx{key: cellKey{"kafka", w.client, "restart"}}, "g"), "--debug")
	w.refresh = func() {
		var vals []string
		sc := bufio.NewScanner(strings.NewReader(cons.stdout.String()))
		for sc.Scan() {
			var r struct {
				V string `json:"v"`
			}
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.V != "" {
				vals = append(vals, r.V)
			}
		}
		w.setConsumed(append(vals, "")) // every scanned line is whole
	}
	w.stopConsuming = func() { cons.stop(); w.refresh(); e.checkSockets(t, e.plain, cons) }
}

// javaWorkload: kafka-verifiable-producer (retrying, idempotent) at 500
// records/s until stopped, and a kafka-verifiable-consumer group.
func (e *env) javaWorkload(t *testing.T, w *workload) {
	prod := javaStart(t, 300*time.Second, nil, "kafka-verifiable-producer", "--bootstrap-server", e.bootstrap(), "--topic", w.topic,
		"--max-messages", "1000000", "--throughput", "500", "--acks", "-1", "--repeating-keys", strconv.Itoa(numKeys),
		"--command-config", e.javaProps(t, e.plain, verifiableProducerProps...))
	w.stopProducing = func() {
		prod.stop() // SIGTERM: the tool closes its producer (flushing) and reports
		acked, errs, _ := verifiableProduced(t, parseVerifiable(t, wholeLines(prod.stdout.String())))
		for _, a := range acked {
			w.ack(a.value)
		}
		for _, e := range errs {
			w.sendErr(e)
		}
		e.checkSockets(t, e.plain, prod)
	}
	cons := javaStart(t, 300*time.Second, nil, "kafka-verifiable-consumer", "--bootstrap-server", e.bootstrap(), "--topic", w.topic,
		"--group-id", name(&cellCtx{key: cellKey{"kafka", w.client, "restart"}}, "g"), "--group-protocol", "classic", "--verbose",
		"--command-config", e.javaProps(t, e.plain, "auto.offset.reset=earliest"))
	w.refresh = func() {
		gs, _ := verifiableConsumed(parseVerifiable(t, wholeLines(cons.stdout.String())))
		vals := make([]string, 0, len(gs)+1)
		for _, g := range gs {
			vals = append(vals, g.value)
		}
		w.setConsumed(append(vals, ""))
	}
	w.stopConsuming = func() { cons.stop(); w.refresh(); e.checkSockets(t, e.plain, cons) }
}

// wholeLines drops a trailing partial line of a running process's output.
func wholeLines(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return ""
}
