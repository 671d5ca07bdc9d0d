package conformance

import (
	"encoding/json"
	"testing"
)

// confluent-kafka's producer and consumer for the encryption scenario:
// librdkafka (the wheel's own build) with each codec.

func init() {
	register("confluent-kafka", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		requireConfluent(t, c)
		encRoundTrip(t, c, e, e.confluentEncProduce, e.confluentEncConsume)
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
