package refusal

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// PartitionFunc rewrites one produced partition's records: it returns the
// records to forward and whether they changed, or the code (and message)
// refusing the partition.
type PartitionFunc func(p *kmsg.ProduceRequestTopicPartition) (out []byte, changed bool, refuse *kerr.Error, msg string)

// Rewrite passes each partition of req's topics through the PartitionFunc
// that topic returns for the topic and its name (nil: the topic is
// forwarded as it is), keeping what it returns and refusing, in r, what it refuses. A
// topic named by id only (Produce v13 on) is named through names; one no
// metadata response through this proxy has named yet is refused with
// UNKNOWN_TOPIC_ID, after unnamed is told its id: clients fetch metadata
// first, UNKNOWN_TOPIC_ID makes them fetch it again, and the retry is
// named. It returns whether req changed.
func (r *Produce) Rewrite(req *kmsg.ProduceRequest, names *filter.TopicNames, unnamed func(id [16]byte), topic func(t *kmsg.ProduceRequestTopic, name string) PartitionFunc) (modified bool) {
	kept := req.Topics[:0]
	for _, t := range req.Topics {
		name := t.Topic
		if name == "" {
			var ok bool
			if name, ok = names.Lookup(t.TopicID); !ok {
				r.Topic(t, kerr.UnknownTopicID, "topic id not yet named by a metadata response through this proxy")
				unnamed(t.TopicID)
				modified = true
				continue
			}
		}
		rewrite := topic(&t, name)
		if rewrite == nil {
			kept = append(kept, t)
			continue
		}
		partitions := t.Partitions[:0]
		for _, p := range t.Partitions {
			out, changed, refuse, msg := rewrite(&p)
			if refuse != nil {
				r.Partition(t, p.Partition, refuse, msg)
				modified = true
				continue
			}
			if changed {
				p.Records, modified = out, true
			}
			partitions = append(partitions, p)
		}
		if len(partitions) > 0 {
			t.Partitions = partitions
			kept = append(kept, t)
		}
	}
	req.Topics = kept
	return modified
}
