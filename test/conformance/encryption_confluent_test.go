package conformance

import (
	"encoding/json"
	"strconv"
	"testing"
)

// confluent-kafka's producer and consumer for the encryption scenario:
// librdkafka (the wheel's own build) with each codec.

func init() {
	register("confluent-kafka", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		requireConfluent(t, c)
		encScenario(t, c, e, encClient{produce: e.confluentEncProduce, consume: e.confluentEncConsume, idempotent: true,
			tombstone: e.confluentEncTombstone, readNullable: e.confluentEncReadNullable, txn: e.confluentEncTxn, readCommitted: e.confluentEncReadCommitted,
			txnNote: "confluent-kafka's transactional producer, zstd"})
	})
}

// confluentEncProduce hands rs to the script as JSON lines. (addr is
// e.enc's, which confluent reaches by itself.)
func (e *env) confluentEncProduce(t *testing.T, _, topic, codec string, rs []encRec) {
	t.Helper()
	var in []byte
	for _, r := range rs {
		line := struct {
			K string      `json:"k"`
			V string      `json:"v"`
			H [][2]string `json:"h"`
		}{K: r.key, V: r.value}
		for _, h := range r.headers {
			line.H = append(line.H, [2]string{h.key, h.value})
		}
		b, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		in = append(append(in, b...), '\n')
	}
	var out confluentConsumed
	e.confluentStdin(t, e.enc, in, &out, "produce", "--stdin", "--topic", topic, "--compression", codec)
	if out.Acked != len(rs) {
		t.Fatalf("confluent-kafka with %s: %d of %d records acked", codec, out.Acked, len(rs))
	}
}

func (e *env) confluentEncConsume(t *testing.T, _, topic string, n int) []encRec {
	t.Helper()
	var out confluentConsumed
	e.confluent(t, e.enc, &out, "consume", "--topic", topic, "--count", itoa(int64(n)))
	var got []encRec
	for _, r := range out.Records {
		g := encRec{key: r.K, value: r.V}
		for _, h := range r.H {
			g.headers = append(g.headers, encHeader{h[0], h[1]})
		}
		got = append(got, g)
	}
	return got
}

// confluentEncTombstone produces key=value and key's tombstone (a null
// "v") in one run of the script.
func (e *env) confluentEncTombstone(t *testing.T, _, topic, key, value string) {
	t.Helper()
	in, err := json.Marshal(map[string]any{"k": key, "v": value})
	if err != nil {
		t.Fatal(err)
	}
	tomb, err := json.Marshal(map[string]any{"k": key, "v": nil})
	if err != nil {
		t.Fatal(err)
	}
	var out confluentConsumed
	e.confluentStdin(t, e.enc, append(append(append(in, '\n'), tomb...), '\n'), &out, "produce", "--stdin", "--topic", topic)
	if out.Acked != 2 {
		t.Fatalf("confluent-kafka: %d of 2 records (a value and its tombstone) acked", out.Acked)
	}
}

// confluentEncTxn writes the three transactions, one run of the script
// each.
func (e *env) confluentEncTxn(t *testing.T, c *cellCtx, _, topic string) txnBatches {
	t.Helper()
	var b txnBatches
	for i, end := range []string{"commit", "abort", "commit"} {
		var out confluentConsumed
		e.confluent(t, e.enc, &out, "produce", "--topic", topic, "--records", strconv.Itoa(encTxnRecords),
			"--start", strconv.Itoa(i*encTxnRecords), "--prefix", end, "--transactional-id", name(c, "txn"),
			"--end", end, "--compression", "zstd")
		rs := makeRecsFrom(end, i*encTxnRecords, encTxnRecords)
		if end == "commit" {
			b.committed = append(b.committed, rs...)
		} else {
			b.aborted = append(b.aborted, rs...)
		}
	}
	return b
}

// confluentEncReadCommitted reads n records of every partition from the
// beginning (no group) with isolation.level=read_committed.
func (e *env) confluentEncReadCommitted(t *testing.T, _, topic string, n int) []got {
	t.Helper()
	var out confluentConsumed
	e.confluent(t, e.enc, &out, "consume", "--topic", topic, "--count", strconv.Itoa(n), "--isolation", "read_committed")
	return out.got()
}

// confluentEncReadNullable reads the first n records of topic (no group);
// the script prints a null value as a JSON null.
func (e *env) confluentEncReadNullable(t *testing.T, _, topic string, n int) []encNullable {
	t.Helper()
	var out struct {
		Records []struct {
			K string  `json:"k"`
			V *string `json:"v"`
		} `json:"records"`
	}
	e.confluent(t, e.enc, &out, "consume", "--topic", topic, "--count", strconv.Itoa(n))
	var rs []encNullable
	for _, r := range out.Records {
		g := encNullable{key: r.K, null: r.V == nil}
		if r.V != nil {
			g.value = *r.V
		}
		rs = append(rs, g)
	}
	return rs
}
