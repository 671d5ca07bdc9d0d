package largemessage

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Produce v9 and later frame a partition's records with an unsigned
// varint length. librdkafka (2.16 and the versions before it) reserves
// four bytes for that length and, when the records need five (a batch of
// 268435454 bytes or more), leaves the field out, so the request cannot
// be read. A broker's message.max.bytes keeps such batches away from it;
// offloading lets them through kproxy. So librdkafka clients are offered
// Produce v8 at most, which frames records with an int32: v9 changed the
// encoding only, and what later versions add (leader discovery on
// NOT_LEADER errors, KIP-951; partitions added to a transaction by the
// broker, KIP-890) a client at v8 does through Metadata and
// AddPartitionsToTxn instead.
const librdkafkaMaxProduce = 8

// isLibrdkafka tells librdkafka by the software name and version its
// ApiVersions request carries (v3 and later): "librdkafka" itself (kcat,
// and clients that keep the default), Confluent's wrappers
// ("confluent-kafka-python", "confluent-kafka-go", ...), or another
// wrapper that names librdkafka in its version, as the Python one does
// ("2.16.1-rdkafka-2.16.0").
func isLibrdkafka(req *kmsg.ApiVersionsRequest) bool {
	return req.ClientSoftwareName == "librdkafka" ||
		strings.HasPrefix(req.ClientSoftwareName, "confluent-kafka-") ||
		strings.Contains(req.ClientSoftwareVersion, "rdkafka")
}

// apiVersions offers a librdkafka client Produce v8 at most, the highest
// version whose records it can frame whatever their size.
func (f *Filter) apiVersions(_ *filter.Conn, req *kmsg.ApiVersionsRequest) filter.Verdict {
	if !isLibrdkafka(req) {
		return filter.Verdict{}
	}
	return filter.Verdict{OnResponse: capProduce}
}

// capProduce lowers the Produce entry of an ApiVersions response to
// librdkafkaMaxProduce, unless the upstream has no version that low.
func capProduce(r kmsg.Response) error {
	resp, ok := r.(*kmsg.ApiVersionsResponse)
	if !ok {
		return nil
	}
	for i := range resp.ApiKeys {
		k := &resp.ApiKeys[i]
		if k.ApiKey == kmsg.Produce.Int16() && k.MinVersion <= librdkafkaMaxProduce {
			k.MaxVersion = min(k.MaxVersion, librdkafkaMaxProduce)
		}
	}
	return nil
}
