package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFirstTopicOfProduceAndFetch(t *testing.T) {
	txn := "txn-1"
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	first := func(key, v int16, body []byte) string {
		name, got := FirstTopic(key, v, body)
		if v >= 13 && got == id {
			return "by-id"
		}
		return name
	}
	for v := int16(0); v <= MaxVersion(FetchKey); v++ {
		wantProduce, wantFetch := "orders", "payments"
		if v >= 13 {
			wantProduce, wantFetch = "by-id", "by-id"
		}
		produce := kmsg.NewPtrProduceRequest()
		produce.SetVersion(v)
		produce.TransactionID = &txn
		produce.Acks = -1
		topic := kmsg.NewProduceRequestTopic()
		topic.Topic, topic.TopicID = "orders", id
		topic.Partitions = []kmsg.ProduceRequestTopicPartition{kmsg.NewProduceRequestTopicPartition()}
		produce.Topics = []kmsg.ProduceRequestTopic{topic}
		body := produce.AppendTo(nil)
		if v <= MaxVersion(ProduceKey) {
			if got := first(ProduceKey, v, body); got != wantProduce {
				t.Errorf("Produce v%d: %q, want %s", v, got, wantProduce)
			}
		}

		fetch := kmsg.NewPtrFetchRequest()
		fetch.SetVersion(v)
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = "payments", id
		ft.Partitions = []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}
		fetch.Topics = []kmsg.FetchRequestTopic{ft}
		body = fetch.AppendTo(nil)
		if got := first(FetchKey, v, body); got != wantFetch {
			t.Errorf("Fetch v%d: %q, want %s", v, got, wantFetch)
		}
		// A prefix that ends before the topic names none.
		for cut := range body {
			if got := first(FetchKey, v, body[:cut]); got != "" && got != wantFetch {
				t.Fatalf("Fetch v%d cut at %d: %q", v, cut, got)
			}
		}
	}
	if got, _ := FirstTopic(MetadataKey, 12, []byte{0, 0, 0, 1, 0, 1, 'x'}); got != "" {
		t.Errorf("Metadata: %q, want \"\"", got)
	}
}
