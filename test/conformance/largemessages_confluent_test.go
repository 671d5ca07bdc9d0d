package conformance

import (
	"strings"
	"testing"
	"time"
)

// lmClientTimeout bounds one run of an external client in the scenario:
// moving 555 MiB through kproxy and the store on two shared cores.
const lmClientTimeout = 10 * time.Minute

// confluent-kafka's producer and consumer for the large-messages scenario:
// librdkafka (the wheel's own build) with the settings of
// confluent_client.py's LM_PRODUCER and LM_CONSUMER.

func init() {
	register("confluent-kafka", scenarioLargeMessages, func(t *testing.T, c *cellCtx, e *env) {
		requireConfluent(t, c)
		c.note("%s", confluentProduceNote)
		lmRoundTrip(t, c, e, lmClient{produce: e.confluentLMProduce, consume: e.confluentLMConsume})
	})
}

// librdkafka 2.16 cannot send a batch of 256 MiB or more at Produce v9+:
// that version carries the batch's length as an unsigned varint, for
// which librdkafka reserves 4 bytes (rd_kafka_buf_finalize_arraycnt in
// src/rdkafka_buf.h, at most 2^28-2 once the compact encoding's +1 is
// added), and for a larger batch it writes no length at all (kfake
// without kproxy answers CORRUPT_MESSAGE: 255.9 MiB accepted, 256.1 MiB
// refused). kproxy offers librdkafka Produce v8 at most where large
// messages are configured, whose length is an int32, so the 500 MiB
// record goes through as franz-go's and Java's do.
const confluentProduceNote = "500 MiB through Produce v8: kproxy offers librdkafka no later version, whose records length librdkafka cannot write for a batch of 256 MiB or more"

// confluentLMRecords is what lm-produce and lm-consume print.
type confluentLMRecords struct {
	Records []struct {
		K      string      `json:"k"`
		N      int         `json:"n"`
		SHA256 string      `json:"sha256"`
		H      [][2]string `json:"h"`
	} `json:"records"`
}

func (r confluentLMRecords) digests() []lmDigest {
	var ds []lmDigest
	for _, x := range r.Records {
		var hs []string
		for _, h := range x.H {
			hs = append(hs, h[0]+"="+h[1])
		}
		ds = append(ds, lmDigest{key: x.K, size: x.N, sha: x.SHA256, headers: strings.Join(hs, ",")})
	}
	return ds
}

func (e *env) confluentLMProduce(t *testing.T, topic, txnID string, plan []lmBatch) []lmDigest {
	t.Helper()
	args := []string{"lm-produce", "--topic", topic}
	if txnID != "" {
		args = append(args, "--transactional-id", txnID)
	}
	var out confluentLMRecords
	e.confluentWithin(t, lmClientTimeout, e.lm, lmPlanText(plan), &out, args...)
	return out.digests()
}

func (e *env) confluentLMConsume(t *testing.T, topic string, n int, readCommitted bool) []lmDigest {
	t.Helper()
	iso := "read_uncommitted"
	if readCommitted {
		iso = "read_committed"
	}
	var out confluentLMRecords
	e.confluentWithin(t, lmClientTimeout, e.lm, nil, &out, "lm-consume", "--topic", topic, "--count", itoa(int64(n)), "--isolation", iso, "--timeout", "600")
	return out.digests()
}
