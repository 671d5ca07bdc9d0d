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
		c.note("%s", confluentLargestNote)
		lmRoundTrip(t, c, e, lmClient{produce: e.confluentLMProduce, consume: e.confluentLMConsume, largest: confluentLargest})
	})
}

// confluentLargest is confluent-kafka's largest record: 200 MiB, not 500.
// librdkafka 2.16's produce request for one record of 256 MiB or more is
// refused as CORRUPT_MESSAGE by kfake without kproxy (255.9 MiB accepted,
// 256.1 MiB refused, with message.max.bytes raised), and kproxy forwards
// it without offloading the value (the real cluster then closes the
// connection: the request is over its socket.request.max.bytes), so the
// producer retries until it times out. franz-go's and Java's 500 MiB
// records go through.
const confluentLargest = 200 << 20

const confluentLargestNote = "largest record 200 MiB: librdkafka's produce request for a record of 256 MiB or more is refused by kfake as CORRUPT_MESSAGE without kproxy, and kproxy forwards it without offloading (open)"

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
